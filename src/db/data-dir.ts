import { CommandRefusal } from '../lib/command-line.js';

/**
 * The embedded database's data directory is held by another running process. Apart from the PGlite
 * adapter so that the command line can recognise it without loading PGlite
 * (docs/architecture.md#light-commands).
 */
export class DataDirInUseError extends CommandRefusal {
  override name = 'DataDirInUseError';

  constructor(
    message: string,
    /** The data directory, and the process that holds it. */
    readonly dataDir: string,
    readonly owner: number,
  ) {
    super(message);
  }
}
