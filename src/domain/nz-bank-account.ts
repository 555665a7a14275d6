// New Zealand bank account numbers: bank (2 digits), branch (4), account (7, or 8 for some banks),
// suffix (2 or 3), checked as Inland Revenue's published "bank account number validation" says:
// the branch within its bank's ranges, and the check digits by the algorithm for the bank (and, for
// most banks, the account's size), a weighted sum of the 18 digits (bank 2, branch 4, account 8,
// suffix 4, each zero-padded on the left) divisible by its modulus.

export interface NzAccount {
  bank: string;
  branch: string;
  account: string;
  suffix: string;
}

/** `01-0902-0068389-00` (dashes or spaces, or none) -> its parts; undefined when it is not that shape. */
export function parseNzAccount(text: string): NzAccount | undefined {
  const m = /^(\d{2})[- ]?(\d{4})[- ]?(\d{7,8})[- ]?(\d{2,3})$/.exec(text);
  if (!m) return undefined;
  return { bank: m[1], branch: m[2], account: m[3], suffix: m[4] };
}

/** Each bank's branch ranges (inclusive). */
const BRANCHES: Record<string, Array<[number, number]>> = {
  '01': [
    [1, 999],
    [1100, 1199],
    [1800, 1899],
  ],
  '02': [
    [1, 999],
    [1200, 1299],
  ],
  '03': [
    [1, 999],
    [1300, 1399],
    [1500, 1599],
    [1700, 1799],
    [1900, 1999],
  ],
  '04': [[2020, 2024]],
  '05': [[8884, 8889]],
  '06': [
    [1, 999],
    [1400, 1499],
  ],
  '08': [[6500, 6599]],
  '09': [[0, 0]],
  '10': [[5165, 5169]],
  '11': [
    [5000, 6499],
    [6600, 8999],
  ],
  '12': [
    [3000, 3299],
    [3400, 3499],
    [3600, 3699],
  ],
  '13': [[4900, 4999]],
  '14': [[4700, 4799]],
  '15': [[3900, 3999]],
  '16': [[4400, 4499]],
  '17': [[3300, 3399]],
  '18': [[3500, 3599]],
  '19': [[4600, 4649]],
  '20': [[4100, 4199]],
  '21': [[4800, 4899]],
  '22': [[4000, 4049]],
  '23': [[3700, 3799]],
  '24': [[4300, 4349]],
  '25': [[2500, 2599]],
  '26': [[2600, 2699]],
  '27': [[3800, 3849]],
  '28': [[2100, 2149]],
  '29': [[2150, 2299]],
  '30': [[2900, 2949]],
  '31': [[2800, 2849]],
  '33': [[6700, 6799]],
  '35': [[2400, 2499]],
  '38': [[9000, 9499]],
};

type Algorithm = { weights: number[]; modulus: number; fold?: boolean };

// Weights over bank (2), branch (4), account (8), suffix (4).
const ALGORITHMS: Record<string, Algorithm> = {
  A: { weights: [0, 0, 6, 3, 7, 9, 0, 0, 10, 5, 8, 4, 2, 1, 0, 0, 0, 0], modulus: 11 },
  B: { weights: [0, 0, 0, 0, 0, 0, 0, 0, 10, 5, 8, 4, 2, 1, 0, 0, 0, 0], modulus: 11 },
  D: { weights: [0, 0, 0, 0, 0, 0, 0, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0], modulus: 11 },
  E: { weights: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 4, 3, 2, 0, 0, 0, 1], modulus: 11, fold: true },
  F: { weights: [0, 0, 0, 0, 0, 0, 0, 1, 7, 3, 1, 7, 3, 1, 0, 0, 0, 0], modulus: 10 },
  G: { weights: [0, 0, 0, 0, 0, 0, 0, 1, 3, 7, 1, 3, 7, 1, 0, 3, 7, 1], modulus: 10, fold: true },
  X: { weights: Array<number>(18).fill(0), modulus: 1 },
};

function algorithmFor(a: NzAccount): Algorithm {
  switch (a.bank) {
    case '08':
      return ALGORITHMS.D;
    case '09':
      return ALGORITHMS.E;
    case '25':
    case '33':
      return ALGORITHMS.F;
    case '26':
    case '28':
    case '29':
      return ALGORITHMS.G;
    case '31':
      return ALGORITHMS.X;
    default:
      return Number(a.account) < 990000 ? ALGORITHMS.A : ALGORITHMS.B;
  }
}

/** Adds a product's digits until one digit is left (algorithms E and G). */
const folded = (n: number): number =>
  n < 10
    ? n
    : folded(
        String(n)
          .split('')
          .reduce((s, d) => s + Number(d), 0),
      );

/** Why the text is not a valid New Zealand bank account number, or undefined. */
export function nzAccountProblem(text: string): string | undefined {
  const a = parseNzAccount(text);
  if (!a) return 'a New Zealand bank account number is BB-bbbb-AAAAAAA-SS(S): bank, branch, account and suffix';
  const ranges = BRANCHES[a.bank];
  if (!ranges) return `bank ${a.bank} is not a New Zealand bank number`;
  const branch = Number(a.branch);
  if (!ranges.some(([lo, hi]) => branch >= lo && branch <= hi))
    return `branch ${a.branch} is not a branch of bank ${a.bank}`;
  const digits = `${a.bank}${a.branch}${a.account.padStart(8, '0')}${a.suffix.padStart(4, '0')}`.split('').map(Number);
  const alg = algorithmFor(a);
  let sum = 0;
  for (const [i, w] of alg.weights.entries()) sum += alg.fold ? folded(digits[i] * w) : digits[i] * w;
  if (sum % alg.modulus !== 0) return `${text} fails its check digits: look for a digit typed wrong`;
  return undefined;
}
