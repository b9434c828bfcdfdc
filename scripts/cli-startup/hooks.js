// Loader hooks (off the main thread): every module the process loads, one URL a line, to the file
// named by CLI_STARTUP_LOG.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  if (process.env.CLI_STARTUP_LOG) appendFileSync(process.env.CLI_STARTUP_LOG, `${url}\n`);
  return nextLoad(url, context);
}
