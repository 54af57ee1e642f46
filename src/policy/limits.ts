// Bounds on the state that admission requests add to the uniqueness machinery (reservations in
// this replica, address Leases in the API server). One place, so the reservation index, the
// address Lease store and docs/security.md name the same numbers.

/**
 * Addresses of one pod that are reserved and claimed (the arbitrated ones). A KubeVirt VM or a
 * DPDK pod asks for a handful of MACs or GUIDs; 64 is far above any real pod and small enough
 * that one forged review cannot start more than 64 Lease writes. Addresses beyond it are still
 * judged against the live pods (no state), with a warning that they were not arbitrated.
 */
export const MAX_ARBITRATED_ADDRESSES_PER_POD = 64;
