// Policies from NetworkAttachmentPolicy objects (cluster mode), through a list/watch. Each object
// is validated like a file document; the verdict is written to its status (condition Accepted,
// True/Valid or False/Invalid) through the status subresource, best effort.
import type { PolicySet } from './engine.js';
import { loadPolicyObject, type PolicyLoadError } from './load.js';
import { PolicyStore, type PolicySource, type SourceOptions } from './source.js';
import { POLICY_GROUP, POLICY_PLURAL, POLICY_VERSION, type PolicyCondition } from './document.js';
import { ListWatch, transportFor, WatchedCache, type KubeObject, type KubeTransport, type KubeCredentials } from '../kube/index.js';

export const POLICIES_PATH = `/apis/${POLICY_GROUP}/${POLICY_VERSION}/${POLICY_PLURAL}`;
const MAX_STATUS_MESSAGE = 1024;

export interface ClusterPolicySourceOptions extends SourceOptions {
  /** Write status conditions (needs `patch` on networkattachmentpolicies/status). Default true. */
  writeStatus?: boolean;
  transport?: KubeTransport;
  backoffMs?: number;
}

export class ClusterPolicySource extends WatchedCache implements PolicySource {
  private readonly store: PolicyStore;
  private readonly transport: KubeTransport;
  protected readonly listWatch: ListWatch;
  private seen: Set<string> | undefined;
  private statusWrites: Promise<unknown> = Promise.resolve();

  constructor(
    kc: KubeCredentials | undefined,
    private readonly options: ClusterPolicySourceOptions = {},
  ) {
    super();
    this.store = new PolicyStore('cluster', options);
    this.transport = transportFor('ClusterPolicySource', kc, options.transport);
    this.listWatch = new ListWatch({
      transport: this.transport,
      path: POLICIES_PATH,
      listAccept: 'application/json',
      watchAccept: 'application/json',
      backoffMs: options.backoffMs,
      onError: (err) => options.logger?.warn({ err: String(err) }, 'NetworkAttachmentPolicy watch failed; retrying'),
      handler: {
        resync: () => void (this.seen = new Set()),
        upsert: (obj) => this.upsert(obj),
        remove: (obj) => obj.metadata?.name && this.store.remove(obj.metadata.name),
        resynced: () => {
          const seen = this.seen;
          this.seen = undefined;
          for (const p of this.store.current().policies) if (seen && !seen.has(p.name)) this.store.remove(p.name);
        },
      },
    });
  }

  /** Also waits for the status writes already issued. */
  override async stop(): Promise<void> {
    await super.stop();
    await this.statusWrites;
  }

  current(): PolicySet {
    return this.store.current();
  }

  errors(): readonly PolicyLoadError[] {
    return this.store.errors();
  }

  onChange(listener: (set: PolicySet) => void): void {
    this.store.onChange(listener);
  }

  /** Resolves when status writes issued so far are done (tests). */
  flushStatus(): Promise<unknown> {
    return this.statusWrites;
  }

  private upsert(obj: KubeObject): void {
    const name = obj.metadata?.name;
    if (!name) return;
    this.seen?.add(name);
    const { policy, error } = loadPolicyObject(obj, 'cluster');
    if (policy) this.store.upsert(policy);
    else if (error) this.store.reject(error);
    const condition: PolicyCondition = policy
      ? { type: 'Accepted', status: 'True', reason: 'Valid', message: 'policy is in force' }
      : {
          type: 'Accepted',
          status: 'False',
          reason: 'Invalid',
          message: truncate(`${error!.message}${this.store.get(name) ? '; the previous valid version stays in force' : ''}`),
        };
    this.writeStatus(obj, condition);
  }

  private writeStatus(obj: KubeObject, condition: PolicyCondition): void {
    if (this.options.writeStatus === false) return;
    const generation = obj.metadata?.generation;
    const status = obj.status as { observedGeneration?: number; conditions?: PolicyCondition[] } | undefined;
    const prev = status?.conditions?.find((c) => c.type === condition.type);
    if (prev && prev.status === condition.status && prev.message === condition.message && status?.observedGeneration === generation) return;
    const full: PolicyCondition = { ...condition, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
    if (generation !== undefined) full.observedGeneration = generation;
    const body = { status: { observedGeneration: generation, conditions: [full] } };
    const name = obj.metadata!.name!;
    this.statusWrites = this.statusWrites
      .then(() => this.transport.patchJson(`${POLICIES_PATH}/${encodeURIComponent(name)}/status`, body, 'application/merge-patch+json'))
      .catch((err: unknown) => this.options.logger?.warn({ policy: name, err: String(err) }, 'could not write policy status'));
  }
}

const truncate = (s: string): string => (s.length > MAX_STATUS_MESSAGE ? `${s.slice(0, MAX_STATUS_MESSAGE)}...` : s);
