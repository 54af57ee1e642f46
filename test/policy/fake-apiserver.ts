// Moved to test/kube/fake-apiserver.ts (shared with the NAD source tests); kept for test/cli's imports.
export { FakeApiServer, until, type Recorded } from '../kube/fake-apiserver.js';
