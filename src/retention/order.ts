/** What the order of a run reads of a pruned table's declaration (src/feature.ts, `PrunedTable`). */
export interface Orderable {
  name: string;
  prune: { readonly table: string };
  refersTo?: readonly string[];
  busy?: boolean;
}

/**
 * The order a retention run prunes in (docs/operations.md#retention), from the tables' own
 * declarations, naming no feature: the busiest tables (`busy`) first, so that a run stopped midway has
 * pruned those, otherwise the order given (the feature list's); and a table's turn is taken first by
 * every table whose rows name it (`refersTo`), so that a kept row never names a pruned one. Throws on a
 * circle of `refersTo`, which no order satisfies.
 */
export function pruneOrder<T extends Orderable>(tables: readonly T[]): T[] {
  const wanted = [...tables].sort((x, y) => Number(Boolean(y.busy)) - Number(Boolean(x.busy)));
  const ordered: T[] = [];
  const placing = new Set<T>();
  const place = (table: T) => {
    if (ordered.includes(table)) return;
    if (placing.has(table)) {
      throw new Error(
        `retention: the pruned tables name each other in a circle: ${[...placing].map((t) => t.name).join(', ')}`,
      );
    }
    placing.add(table);
    // The tables (of another SQL table) whose rows name this one go first.
    for (const other of wanted) {
      if (other.prune.table !== table.prune.table && (other.refersTo ?? []).includes(table.prune.table))
        place(other);
    }
    placing.delete(table);
    ordered.push(table);
  };
  for (const table of wanted) place(table);
  return ordered;
}
