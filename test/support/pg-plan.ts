// PostgreSQL plans as EXPLAIN (FORMAT JSON) gives them, for tests that check a statement's plan.

export interface PlanNode {
  'Node Type': string;
  'Actual Loops'?: number;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** The node and every node under it. */
export const planNodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(planNodes)];
