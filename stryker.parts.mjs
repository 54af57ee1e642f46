// The parts of the core that mutation testing covers (docs/mutation.md), shared by
// stryker.config.mjs and scripts/mutation.mjs. Each part has its own incremental file,
// reports/stryker-incremental/<part>.json: the tap runner names tests by their position in the
// list of test files, so one file shared by parts with different lists would mix up which test
// killed which mutant.
const ADMISSION_TESTS = ['test/admission/{builtin,claims,decode,draft,dra,hotplug,hugepages,inject-resources,judge,mutate,nads,networks,node-selector,plan,podnetinfo,pod-mutate,pod-validate,quantity,response,warnings,workloads}.test.ts'];

export const SCOPES = {
  field: {
    mutate: ['src/field/errors.ts', 'src/field/path.ts'],
    tests: ['test/field/{errors,render,path}.test.ts'],
  },
  'policy-addresses': {
    mutate: ['src/policy/addresses.ts'],
    tests: ['test/policy/{engine,address-index,addresses}.test.ts'],
  },
  'policy-rules': {
    mutate: ['src/policy/rules.ts'],
    tests: ['test/policy/{engine,address-index,addresses,rules}.test.ts'],
  },
  'policy-engine': {
    mutate: ['src/policy/engine.ts'],
    tests: ['test/policy/{engine,address-index,load,matchers,evaluate}.test.ts'],
  },
  // src/nads analysis and validation, in two parts: the NAD's CNI config and its validation, and
  // the plugin table with what a chain reads (plugins, reach, ranges).
  'nads-validate': {
    mutate: ['src/nads/{cni,validate,names,annotations,json-position,model}.ts'],
    tests: ['test/nads/{annotations,cni,documents,examples,model,names,static-source,validate}.test.ts'],
  },
  // The table's docs are compared by test/scripts/gen.test.ts since the generators moved to
  // scripts/; the ranges' address checks (link-local and in-subnet gateways, Go's readings) are
  // held by the built-in IPAM and gateway checks that use them.
  'nads-reach': {
    mutate: ['src/nads/{plugins,reach,ranges}.ts'],
    tests: [
      'test/nads/{reach,docs,ranges,plugin-table}.test.ts',
      'test/scripts/gen.test.ts',
      'test/admission/{builtin-ipam,builtin-gateway,builtin-plugins}.test.ts',
    ],
  },
  // src/annotation in three parts, so that each finished part is recorded in the incremental file
  // even if a later one is cut short.
  'annotation-readers': {
    mutate: ['src/annotation/{json-reader,hwaddr,simple,cni-args,serialize}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip,gateway-family,cni-args,serialize,element,schema,formats,parse}.test.ts'],
  },
  'annotation-element': {
    mutate: ['src/annotation/{element,keys,schema}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip,gateway-family,cni-args,serialize,element,schema,formats,parse}.test.ts'],
  },
  'annotation-parse': {
    mutate: ['src/annotation/{parse,formats,cross}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip,gateway-family,cni-args,serialize,element,schema,formats,parse}.test.ts'],
  },
  // src/admission in seven parts of 200 to 370 lines: a part's results are recorded only when its
  // run finishes, and a survivor runs every admission test file (about 4 s each on this machine),
  // so a part is kept to what one run finishes in well under an hour.
  // Every part has the same test files: ADMISSION_TESTS.
  'admission-networks': {
    mutate: ['src/admission/{networks,plan,judge,warnings}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-builtin': {
    mutate: ['src/admission/{builtin,podnetinfo}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-claims': {
    mutate: ['src/admission/device-plan.ts', 'src/dra/claim-serving.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-mutate': {
    mutate: ['src/admission/{mutate,draft,hotplug,node-selector,quantity}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-inject': {
    mutate: ['src/admission/{inject-resources,hugepages}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-review': {
    mutate: ['src/admission/{review,review-pod,review-nad,decode,object}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-response': {
    mutate: ['src/admission/{response,decision,target,namespace,observe}.ts'],
    tests: ADMISSION_TESTS,
  },
  // The pipeline's own tests, and the HTTPS tests whose server drives it (address Leases, DRA, observe mode).
  pipeline: {
    mutate: ['src/server/pipeline.ts'],
    tests: ['test/server/{pipeline,contract,real-core,address-leases,dra,observe}.test.ts'],
  },
  // The state that lives across requests (issue 30): the uniqueness index (live pods and
  // reservations), and what feeds it from the pod watch (with the NAD usage index).
  'policy-address-index': {
    mutate: ['src/policy/address-index.ts'],
    // The behaviour file first: it loads only the module (about 1 s of CPU), and the first failing
    // file kills the mutant; address-index.test.ts (engine and CPU-ratio tests) runs for the rest.
    tests: ['test/policy/address-index-behaviour.test.ts', 'test/policy/address-index.test.ts'],
  },
  'policy-pod-source': {
    mutate: ['src/policy/{pod-source,nad-usage}.ts'],
    // Named one by one, in this order: pod-facts (podNetworkFacts and its cache, about 1 s) before
    // pod-source (the fake API server, about 2 s), which runs only for what the others leave alive.
    tests: ['test/policy/nad-usage.test.ts', 'test/policy/pod-facts.test.ts', 'test/policy/pod-source.test.ts'],
  },
  // Asking the API server whether a claim's holder runs (before a claim the watch never confirmed is
  // taken over or swept): what counts as running with the address, and what the GET's answers mean.
  'policy-pod-lookup': {
    mutate: ['src/policy/pod-lookup.ts'],
    tests: ['test/policy/pod-lookup.test.ts'],
  },
  // The bounded interners the NAD cache, the pod watch and the address index share (one copy per
  // value while held, never more than their size held).
  'nads-intern': {
    mutate: ['src/nads/intern.ts'],
    tests: ['test/nads/intern.test.ts'],
  },
  // src/audit's pure modules (issue #30), in five parts: the size and result caps (bounds), what
  // the audit writes and prints (report, render), reading a pod object (live-pod), judging live
  // pods and NADs with the admission core (judge, judge-nad, snapshot), and the verdict memo; the
  // Lease is a sixth, below. Left out, for time per mutant: the
  // adapters' tests (background, publisher: timers and fakes) and report-bounds (it judges 10,000
  // pods, and report and render pin the same caps at their exact boundaries).
  'audit-bounds': {
    mutate: ['src/audit/bounds.ts'],
    tests: ['test/audit/{bounds,report,render}.test.ts'],
  },
  'audit-report': {
    mutate: ['src/audit/{report,render}.ts'],
    tests: ['test/audit/{bounds,report,render}.test.ts'],
  },
  'audit-live-pod': {
    mutate: ['src/audit/live-pod.ts'],
    tests: ['test/audit/live-pod.test.ts'],
  },
  'audit-judge': {
    mutate: ['src/audit/{judge,judge-nad,snapshot}.ts'],
    tests: ['test/audit/{judge,judge-nad,owners,dra-inputs,snapshot}.test.ts'],
  },
  // The audit's verdict memo (src/audit/memo.ts): when a template pod's judgement is reused, and its
  // bounds (entries, key length, findings kept, age).
  'audit-memo': {
    mutate: ['src/audit/memo.ts'],
    tests: ['test/audit/memo.test.ts'],
  },
  // The report writer's Lease (one writer at a time), through a scripted transport: what it reads
  // and writes, when another holder is taken over, a lost race. publisher.test.ts, which drives it
  // with the writer's timers, stays out of the part (seconds a run).
  'audit-lease': {
    mutate: ['src/audit/lease.ts'],
    tests: ['test/audit/lease.test.ts'],
  },
  // src/dra (issue 30): what a CEL selector certainly requires (the 1,024-character and
  // 32-expression caps), and the pure views over DeviceClasses and templates.
  'dra-selectors': {
    mutate: ['src/dra/selectors.ts'],
    tests: ['test/dra/selectors.test.ts'],
  },
  // The watches (device-classes, claim-templates) are adapters: cluster.test.ts drives them
  // through the fake API server, where they decide what is kept and when it goes.
  'dra-view': {
    mutate: ['src/dra/{static-view,paths,types,device-classes,claim-templates}.ts'],
    tests: ['test/dra/{static-view,device-classes,paths,cluster}.test.ts'],
  },
  // The address Leases (issue 30), in three parts: the pure Leases and sharing owners; the call
  // gate; the store (tested through the fake Lease API of test/policy/fake-leases.ts). The pure
  // tests come first: they load no I/O and kill most mutants in a few seconds. The gate has its own
  // part so that it finishes in one sitting beside the others.
  'policy-address-leases': {
    mutate: ['src/policy/{address-leases,owner}.ts'],
    tests: ['test/policy/{address-leases-pure,owner,address-leases}.test.ts'],
  },
  'policy-lease-gate': {
    mutate: ['src/policy/lease-write-gate.ts'],
    tests: ['test/policy/lease-write-gate.test.ts'],
  },
  'policy-address-lease-store': {
    mutate: ['src/policy/address-lease-store.ts'],
    tests: ['test/policy/{address-lease-store,address-leases}.test.ts'],
  },
};

/** A group name stands for its parts. */
export const GROUPS = {
  annotation: ['annotation-readers', 'annotation-element', 'annotation-parse'],
  nads: ['nads-validate', 'nads-reach'],
  admission: ['admission-networks', 'admission-builtin', 'admission-claims', 'admission-mutate', 'admission-inject', 'admission-review', 'admission-response'],
  'address-leases': ['policy-address-leases', 'policy-lease-gate', 'policy-address-lease-store'],
};

/** The parts named by a comma-separated list of part and group names (all parts if empty). */
export function partsOf(list) {
  if (!list) return Object.keys(SCOPES);
  const names = list.split(',').flatMap((name) => GROUPS[name] ?? [name]);
  for (const name of names) if (!SCOPES[name]) throw new Error(`unknown part "${name}" (one of ${[...Object.keys(SCOPES), ...Object.keys(GROUPS)].join(', ')})`);
  return names;
}
