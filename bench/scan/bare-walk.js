// The least any Node program can do to scan a tree: start Node, then list every directory
// with readdirSync and recurse, with no ignore rules, no parsing and no output. bench/scan
// times it beside `svc scan` and `find` as the floor a Node CLI cannot go below.
import { readdirSync } from 'node:fs';

let files = 0;
walk(process.argv[2]);

function walk(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) walk(`${directory}/${entry.name}`);
    else files += 1;
  }
}
