// The parts of the core that mutation testing covers (docs/mutation.md), shared by
// stryker.config.mjs and scripts/mutation.mjs. Each part has its own incremental file,
// reports/stryker-incremental/<part>.json: the tap runner names tests by their position in the
// list of test files, so one file shared by parts with different lists would mix up which test
// killed which mutant.
// Every test file of test/admission but fuzz.test.ts (properties: seconds a mutant, bounds not values).
const ADMISSION_TESTS = [
  'test/admission/{builtin,builtin-gateway,builtin-ipam,builtin-mac,builtin-plugins,decode,device-plan,draft,dra,effective-mac,hotplug,hugepages,identity,inject-resources,judge,kubevirt,mutate,nads,networks,networks-cache,node-selector,plan,podnetinfo,pod-mutate,pod-validate,quantity,response,warnings,workloads}.test.ts',
];

export const SCOPES = {
  field: {
    about: 'field errors and paths',
    mutate: ['src/field/errors.ts', 'src/field/path.ts'],
    tests: ['test/field/{errors,render,path}.test.ts'],
  },
  'policy-addresses': {
    about: 'the uniqueness rules of addresses',
    mutate: ['src/policy/addresses.ts'],
    tests: ['test/policy/{engine,address-index,addresses}.test.ts'],
  },
  'policy-rules': {
    about: 'the policy rules',
    mutate: ['src/policy/rules.ts'],
    tests: ['test/policy/{engine,address-index,addresses,rules}.test.ts'],
  },
  'policy-engine': {
    about: 'the policy engine: which policies apply, enforce/warn/audit',
    mutate: ['src/policy/engine.ts'],
    tests: ['test/policy/{engine,address-index,load,matchers,evaluate}.test.ts'],
  },
  // src/nads analysis and validation, in two parts: the NAD's CNI config and its validation, and
  // the plugin table with what a chain reads (plugins, reach, ranges).
  'nads-validate': {
    about: "a NAD's CNI config and its validation",
    mutate: ['src/nads/{cni,validate,names,annotations,json-position,model}.ts'],
    tests: ['test/nads/{annotations,cni,documents,examples,model,names,static-source,validate}.test.ts'],
  },
  // The table's docs are compared by test/scripts/gen.test.ts since the generators moved to
  // scripts/; the ranges' address checks (link-local and in-subnet gateways, Go's readings) are
  // held by the built-in IPAM and gateway checks that use them.
  'nads-reach': {
    about: 'the plugin table, what a chain reads, host-local ranges',
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
    about: 'the JSON reader, MACs and GUIDs, the simple form, cni-args, serializing',
    mutate: ['src/annotation/{json-reader,hwaddr,simple,cni-args,serialize}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip,gateway-family,cni-args,serialize,element,schema,formats,parse}.test.ts'],
  },
  'annotation-element': {
    about: "one element's keys and their schema",
    mutate: ['src/annotation/{element,keys,schema}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip,gateway-family,cni-args,serialize,element,schema,formats,parse}.test.ts'],
  },
  'annotation-parse': {
    about: 'the annotation as a whole: forms, formats, checks across elements',
    mutate: ['src/annotation/{parse,formats,cross}.ts'],
    tests: ['test/annotation/{cross,hwaddr,json-reader,json,simple,roundtrip,gateway-family,cni-args,serialize,element,schema,formats,parse}.test.ts'],
  },
  // src/admission in seven parts of 200 to 370 lines: a part's results are recorded only when its
  // run finishes, and a survivor runs every admission test file (about 4 s each on this machine),
  // so a part is kept to what one run finishes in well under an hour.
  // Every part has the same test files: ADMISSION_TESTS.
  'admission-networks': {
    about: 'what a selection needs, the never-deny judgement',
    mutate: ['src/admission/{networks,plan,judge,warnings}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-builtin': {
    about: 'the built-in checks of a chain; podnetinfo',
    mutate: ['src/admission/{builtin,podnetinfo}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-builtin-ipam': {
    about: 'host-local and static IPAM as the plugins execute them',
    mutate: ['src/admission/builtin-ipam.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-builtin-mac': {
    about: 'MACs by what each plugin sets, gateways, interface names',
    mutate: ['src/admission/{builtin-mac,builtin-gateway,builtin-ifnames}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-claims': {
    about: 'DRA ResourceClaims: the device plan, what a claim can serve',
    mutate: ['src/admission/device-plan.ts', 'src/dra/claim-serving.ts'],
    tests: [...ADMISSION_TESTS, 'test/dra/claim-serving.test.ts'],
  },
  'admission-mutate': {
    about: 'the patch: draft, hot-plug, node selector, quantities',
    mutate: ['src/admission/{mutate,draft,hotplug,node-selector,quantity}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-inject': {
    about: 'the device-plugin resources',
    mutate: ['src/admission/{inject-resources,hugepages}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-review': {
    about: 'the review of Pods, workloads, NADs and KubeVirt VMs; decoding; object identity',
    mutate: ['src/admission/{review,review-pod,review-nad,review-vm,decode,object,identity}.ts'],
    tests: ADMISSION_TESTS,
  },
  'admission-response': {
    about: 'the answer, decisions, targets, namespaces, observe mode',
    mutate: ['src/admission/{response,decision,target,namespace,observe}.ts'],
    tests: ADMISSION_TESTS,
  },
  // The pipeline's own tests, and the HTTPS tests whose server drives it (address Leases, DRA, observe mode).
  pipeline: {
    about: "the server's review pipeline",
    mutate: ['src/server/pipeline.ts'],
    tests: ['test/server/{pipeline,contract,real-core,address-leases,dra,observe}.test.ts'],
  },
  // The state that lives across requests (issue 30): the uniqueness index (live pods and
  // reservations), and what feeds it from the pod watch (with the NAD usage index).
  'policy-address-index': {
    about: 'live pods and reservations: who conflicts, what a pod holds, the caps',
    mutate: ['src/policy/address-index.ts'],
    // The behaviour file first: it loads only the module (about 1 s of CPU), and the first failing
    // file kills the mutant; address-index.test.ts (engine and CPU-ratio tests) runs for the rest.
    tests: ['test/policy/address-index-behaviour.test.ts', 'test/policy/address-index.test.ts'],
  },
  'policy-pod-source': {
    about: 'what the pod watch feeds the index and the NAD usage',
    mutate: ['src/policy/{pod-source,nad-usage}.ts'],
    // Named one by one, in this order: pod-facts (podNetworkFacts and its cache, about 1 s) before
    // pod-source (the fake API server, about 2 s), which runs only for what the others leave alive.
    tests: ['test/policy/nad-usage.test.ts', 'test/policy/pod-facts.test.ts', 'test/policy/pod-source.test.ts'],
  },
  // Asking the API server whether a claim's holder runs (before a claim the watch never confirmed is
  // taken over or swept): what counts as running with the address, and what the GET's answers mean.
  'policy-pod-lookup': {
    about: "whether a Lease's holder pod runs with its address",
    mutate: ['src/policy/pod-lookup.ts'],
    tests: ['test/policy/pod-lookup.test.ts'],
  },
  // The bounded interners the NAD cache, the pod watch and the address index share (one copy per
  // value while held, never more than their size held).
  'nads-intern': {
    about: 'the bounded interners the NAD cache, the pod watch and the address index share',
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
    about: 'the size and result caps',
    mutate: ['src/audit/bounds.ts'],
    tests: ['test/audit/{bounds,report,render}.test.ts'],
  },
  'audit-report': {
    about: "PolicyReports, netattach audit's output",
    mutate: ['src/audit/{report,render}.ts'],
    tests: ['test/audit/{bounds,report,render}.test.ts'],
  },
  'audit-live-pod': {
    about: 'a pod object as the audit reads it',
    mutate: ['src/audit/live-pod.ts'],
    tests: ['test/audit/live-pod.test.ts'],
  },
  'audit-judge': {
    about: 'live pods and NADs judged by the admission core',
    mutate: ['src/audit/{judge,judge-nad,snapshot}.ts'],
    tests: ['test/audit/{judge,judge-nad,owners,dra-inputs,snapshot}.test.ts'],
  },
  // The audit's verdict memo (src/audit/memo.ts): when a template pod's judgement is reused, and its
  // bounds (entries, key length, findings kept, age).
  'audit-memo': {
    about: 'the verdict memo for template pods: when a judgement is reused, its bounds',
    mutate: ['src/audit/memo.ts'],
    tests: ['test/audit/memo.test.ts'],
  },
  // The report writer's Lease (one writer at a time), through a scripted transport: what it reads
  // and writes, when another holder is taken over, a lost race. publisher.test.ts, which drives it
  // with the writer's timers, stays out of the part (seconds a run).
  'audit-lease': {
    about: "the report writer's Lease",
    mutate: ['src/audit/lease.ts'],
    tests: ['test/audit/lease.test.ts'],
  },
  // src/dra (issue 30): what a CEL selector certainly requires (the 1,024-character and
  // 32-expression caps), and the pure views over DeviceClasses and templates.
  'dra-selectors': {
    about: 'what a CEL selector certainly requires of resourceName; its caps',
    mutate: ['src/dra/selectors.ts'],
    tests: ['test/dra/selectors.test.ts'],
  },
  // The watches (device-classes, claim-templates) are adapters: cluster.test.ts drives them
  // through the fake API server, where they decide what is kept and when it goes.
  'dra-view': {
    about: 'the fixed view, which way a device is served, the DeviceClass and template watches',
    mutate: ['src/dra/{static-view,paths,types,device-classes,claim-templates}.ts'],
    tests: ['test/dra/{static-view,device-classes,paths,cluster}.test.ts'],
  },
  // The address Leases (issue 30), in three parts: the pure Leases and sharing owners; the call
  // gate; the store (tested through the fake Lease API of test/policy/fake-leases.ts). The pure
  // tests come first: they load no I/O and kill most mutants in a few seconds. The gate has its own
  // part so that it finishes in one sitting beside the others.
  'policy-address-leases': {
    about: 'address Lease names, holders, staleness, messages; the sharing owners',
    mutate: ['src/policy/{address-leases,owner}.ts'],
    tests: ['test/policy/{address-leases-pure,owner,address-leases}.test.ts'],
  },
  'policy-lease-gate': {
    about: 'the Lease calls in flight and waiting',
    mutate: ['src/policy/lease-write-gate.ts'],
    tests: ['test/policy/lease-write-gate.test.ts'],
  },
  'policy-address-lease-store': {
    about: 'the Lease store: create, take over, release, sweep, the bounds',
    mutate: ['src/policy/address-lease-store.ts'],
    tests: ['test/policy/{address-lease-store,address-leases}.test.ts'],
  },
};

/**
 * Every source file no part mutates, and why: test/mutation/parts.test.ts fails on a file that is
 * in neither list (a new or renamed module silently left out) and on an entry that names nothing.
 */
export const UNMUTATED = [
  {
    files: ['src/*/index.ts', 'src/{admission,annotation,audit,check,explain,nads,policy,server}/types.ts'],
    why: 'public faces and declarations: re-exports and types, no decisions',
  },
  {
    files: [
      'src/kube/*.ts',
      'src/server/{address-leases,admission-app,body,deadline,health-app,heap,logger,metrics,server,tls}.ts',
      'src/cli/*.ts',
      'src/certs/*.ts',
      'src/nads/{cluster-source,directory-source,static-source,factory,logger}.ts',
      'src/policy/{cluster-source,file-source,source,log,metrics,namespace-labels}.ts',
      'src/audit/{background,cluster,publisher,metrics}.ts',
      'src/dra/cluster.ts',
      'src/kubevirt/cluster.ts',
      'src/schemas/load.ts',
      'src/yaml/index.ts',
    ],
    why: 'adapters (the API server, watches, files, TLS, HTTP, the command line): tested through fakes, over real HTTPS and end to end, where a mutant costs seconds of timers and sockets',
  },
  {
    files: [
      'src/check/*.ts',
      'src/explain/*.ts',
      'src/kubevirt/{bindings,render}.ts',
      'src/nads/{documents,limits,mac-setters,object}.ts',
      'src/policy/{compile,crd,document,glob,limits,load,schema,selector}.ts',
      'src/json/shape.ts',
      'src/field/text.ts',
      'src/audit/kept-text.ts',
      'src/contracts/admission-review.ts',
    ],
    why: 'no part yet: the offline checker and explain, KubeVirt bindings, policy loading, shapes and limits (their own unit tests hold them; a part for each is future work)',
  },
];

/** A group name stands for its parts. */
export const GROUPS = {
  annotation: ['annotation-readers', 'annotation-element', 'annotation-parse'],
  nads: ['nads-validate', 'nads-reach'],
  admission: ['admission-networks', 'admission-builtin', 'admission-builtin-ipam', 'admission-builtin-mac', 'admission-claims', 'admission-mutate', 'admission-inject', 'admission-review', 'admission-response'],
  'address-leases': ['policy-address-leases', 'policy-lease-gate', 'policy-address-lease-store'],
};

/** The parts named by a comma-separated list of part and group names (all parts if empty). */
export function partsOf(list) {
  if (!list) return Object.keys(SCOPES);
  const names = list.split(',').flatMap((name) => GROUPS[name] ?? [name]);
  for (const name of names) if (!SCOPES[name]) throw new Error(`unknown part "${name}" (one of ${[...Object.keys(SCOPES), ...Object.keys(GROUPS)].join(', ')})`);
  return names;
}
