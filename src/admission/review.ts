// The core's entry point: (request, context) -> Decision, dispatching on the resource.
import { allow, internalError, Verdict } from './decision.js';
import { identityErrors } from './identity.js';
import { reviewNad } from './review-nad.js';
import { reviewPod, reviewTemplate } from './review-pod.js';
import { reviewVm } from './review-vm.js';
import { targetOf } from './target.js';
import type { AdmissionContext, AdmissionRequest, Decision } from './types.js';

export function review(request: AdmissionRequest, context: AdmissionContext): Decision {
  try {
    const target = targetOf(request);
    if (target.kind !== 'other') {
      const identity = identityErrors(request);
      if (identity.length > 0) return new Verdict().addInvalid(...identity).build();
    }
    switch (target.kind) {
      case 'pod':
        return reviewPod(request, context);
      case 'template':
        return reviewTemplate(request, context, target.location);
      case 'vm':
        return reviewVm(request, context, target.resource);
      case 'nad':
        return reviewNad(request, context);
      case 'other':
        return allow();
    }
  } catch (err) {
    // Every input is meant to end as a field error; this is the net under a bug, not a code path.
    return internalError(err);
  }
}
