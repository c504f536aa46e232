// Medians, percentiles, ratios and tables for the benchmarks that run svc beside a peer.

/** The list rotated by `by`: each round measures the servers in a different order. */
export function rotate(list, by) {
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

/** Appends `value` to the list kept under `key`. */
export function push(map, key, value) {
  if (!map.has(key)) map.set(key, []);
  map.get(key).push(value);
}

export function median(samples) {
  return percentile(samples, 0.5);
}

/** Linear interpolation between the closest ranks; `share` in [0, 1]. */
export function percentile(samples, share) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (sorted.length - 1) * share;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.ceil(at)] - sorted[low]) * (at - low);
}

export function ms(value) {
  return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`;
}

/** A markdown table, or aligned columns (the first two left, the rest right) for a terminal. */
export function printTable(header, rows, { markdown }) {
  if (markdown) {
    console.log(`| ${header.join(' | ')} |`);
    console.log(`|${header.map(() => '---').join('|')}|`);
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);
    return;
  }
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}
