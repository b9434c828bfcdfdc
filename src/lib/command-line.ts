/**
 * What a `sibyl` command is given and how it answers: shared by the command line (`cli/`) and the
 * features' own commands, so that neither imports the other's files.
 */

/** CLI output: with --json, stdout carries exactly one JSON object and nothing else. */
export interface Output {
  json: boolean;
  result(obj: Record<string, unknown>, human: string): void;
}

export function createOutput(json: boolean, write: (text: string) => void): Output {
  return {
    json,
    result(obj, human) {
      write(json ? `${JSON.stringify(obj)}\n` : `${human}\n`);
    },
  };
}

/**
 * A refusal a command explains in its message (a stream the service refused, …): the command line
 * prints the message without a stack trace, exit code 1. The rooms' own refusals extend it, so that
 * the command line names none of them.
 */
export class CommandRefusal extends Error {
  override name = 'CommandRefusal';
}

/** A command line that does not parse: exit code 2, with the usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A command's positional arguments (after the action) and its options. */
export interface CommandArgs {
  positionals: string[];
  options: Record<string, string | boolean | undefined>;
}

/** The positional argument at `index`, or a UsageError naming it. */
export function required(args: CommandArgs, index: number, name: string): string {
  const value = args.positionals[index];
  if (!value) throw new UsageError(`missing ${name}`);
  return value;
}

/** A string option, or undefined. */
export function option(args: CommandArgs, name: string): string | undefined {
  const value = args.options[name];
  return typeof value === 'string' ? value : undefined;
}
