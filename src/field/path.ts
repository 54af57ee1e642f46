// Field paths rendered as Kubernetes does: `a.b[3].c`, map keys in brackets unquoted
// (`metadata.annotations[k8s.v1.cni.cncf.io/networks]`).
//
// Names and keys may be the sender's (a cni-args key, an annotation key of a forged review): a
// long one is cut like a value (text.ts), here where the path is built, because every error
// under it repeats the path: a 200 KB key made 20 listed errors a 4 MB denial.
import { cutText } from './text.js';

export const child = (base: string, name: string): string => (base ? `${base}.${cutText(name)}` : cutText(name));
export const index = (base: string, i: number): string => `${base}[${i}]`;
export const key = (base: string, k: string): string => `${base}[${cutText(k)}]`;
