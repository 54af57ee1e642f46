// Field paths rendered as Kubernetes does: `a.b[3].c`, map keys in brackets unquoted
// (`metadata.annotations[k8s.v1.cni.cncf.io/networks]`).

export const child = (base: string, name: string): string => (base ? `${base}.${name}` : name);
export const index = (base: string, i: number): string => `${base}[${i}]`;
export const key = (base: string, k: string): string => `${base}[${k}]`;
