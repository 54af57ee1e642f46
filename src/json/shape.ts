// A budget for untrusted JSON text, checked before JSON.parse: V8's parser needs seconds and
// hundreds of MB for 2,000,000 nested `[`, and turns 4 MB of `[],` into 1.3 million arrays.
// One linear pass, no allocation.

export interface ShapeLimits {
  maxDepth: number;
  maxContainers: number;
}

/**
 * Why `text` exceeds the limits, or undefined. Not a validator: text that is not JSON passes
 * (JSON.parse reports it). Linear: string contents are skipped with indexOf.
 */
export function jsonShapeProblem(text: string, limits: ShapeLimits): string | undefined {
  let depth = 0;
  let containers = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // The closing quote is the next one not preceded by an odd run of backslashes. Each run is
      // counted once (runs before different quotes are disjoint), so this stays linear.
      let j = text.indexOf('"', i + 1);
      while (j > 0) {
        let k = j - 1;
        while (text.charCodeAt(k) === 92) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (j < 0) return undefined;
      i = j;
    } else if (c === 123 || c === 91) {
      if (++depth > limits.maxDepth) return `JSON nested deeper than ${limits.maxDepth} levels`;
      if (++containers > limits.maxContainers) return `JSON with more than ${limits.maxContainers} objects and arrays`;
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
  return undefined;
}
