// A min-heap of numbers in an array: the scheduler's retry due times, the earliest first.

/** Adds `v` to the min-heap `h`. */
export function heapPush(h: number[], v: number): void {
  let i = h.push(v) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (h[parent] <= v) break;
    h[i] = h[parent]!;
    i = parent;
  }
  h[i] = v;
}

/** Removes the smallest value of the min-heap `h`. */
export function heapPop(h: number[]): void {
  const last = h.pop()!;
  if (h.length === 0) return;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l;
    if (h[c] >= last) break;
    h[i] = h[c]!;
    i = c;
  }
  h[i] = last;
}
