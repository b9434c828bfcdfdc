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

export class UsageError extends Error {
  override name = 'UsageError';
}
