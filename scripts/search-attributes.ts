import { SEARCH_ATTRIBUTES } from '../src/temporal/search-attributes';

/** Prints our search attributes as NAME=TYPE, one per line, for scripts/start.sh and the compose files' checks. */
if (require.main === module) {
  process.stdout.write(`${SEARCH_ATTRIBUTES.map((a) => `${a.name}=${a.type}`).join('\n')}\n`);
}
