// The parts of the core that mutation testing covers (docs/mutation.md), shared by
// stryker.config.mjs and scripts/mutation.mjs. Each part has its own incremental file,
// reports/stryker-incremental/<part>.json: the tap runner names tests by their position in the
// list of test files, so one file shared by parts with different lists would mix up which test
// killed which mutant.
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
  'nads-reach': {
    mutate: ['src/nads/{plugins,reach,ranges}.ts'],
    tests: ['test/nads/{reach,docs,ranges}.test.ts'],
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
  // src/admission in three parts: the network rules, the mutation, the review plumbing.
  'admission-rules': {
    mutate: ['src/admission/{networks,plan,judge,warnings,builtin,claims,podnetinfo}.ts'],
    tests: ['test/admission/{builtin,decode,dra,hugepages,nads,networks,plan,pod-mutate,pod-validate,response,workloads}.test.ts'],
  },
  'admission-mutate': {
    mutate: ['src/admission/{mutate,draft,hotplug,hugepages,inject-resources,node-selector,quantity}.ts'],
    tests: ['test/admission/{builtin,decode,dra,hugepages,nads,networks,plan,pod-mutate,pod-validate,response,workloads}.test.ts'],
  },
  'admission-review': {
    mutate: ['src/admission/{decode,object,review,review-pod,review-nad,response,decision,target,namespace,observe}.ts'],
    tests: ['test/admission/{builtin,decode,dra,hugepages,nads,networks,plan,pod-mutate,pod-validate,response,workloads}.test.ts'],
  },
  pipeline: {
    mutate: ['src/server/pipeline.ts'],
    tests: ['test/server/{pipeline,contract,real-core}.test.ts'],
  },
};

/** A group name stands for its parts. */
export const GROUPS = {
  annotation: ['annotation-readers', 'annotation-element', 'annotation-parse'],
  nads: ['nads-validate', 'nads-reach'],
  admission: ['admission-rules', 'admission-mutate', 'admission-review'],
};

/** The parts named by a comma-separated list of part and group names (all parts if empty). */
export function partsOf(list) {
  if (!list) return Object.keys(SCOPES);
  const names = list.split(',').flatMap((name) => GROUPS[name] ?? [name]);
  for (const name of names) if (!SCOPES[name]) throw new Error(`unknown part "${name}" (one of ${[...Object.keys(SCOPES), ...Object.keys(GROUPS)].join(', ')})`);
  return names;
}
