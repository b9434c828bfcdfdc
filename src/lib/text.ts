/** Well-formed Unicode, a rule shared by the API edge and the market ingestion. */

export interface TextProblem {
  path: string;
  message: string;
}

/** A JSON escape of a UTF-16 surrogate (`\ud800`): the only way parsed JSON text can hold a lone one. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The first string (value or object key) in a parsed JSON value that is not well-formed UTF-16 — a
 * lone surrogate, which JSON's `\ud800` escapes can produce and which becomes U+FFFD when stored, so
 * the service would keep something other than what was sent. Null when every string is well formed.
 * `source` is the JSON text: without a surrogate escape in it, there is nothing to look for.
 */
export function illFormedString(source: string, value: unknown, path: string): TextProblem | null {
  if (!SURROGATE_ESCAPE.test(source)) return null;
  return findIllFormed(value, path);
}

function findIllFormed(value: unknown, path: string): TextProblem | null {
  if (typeof value === 'string') {
    return value.isWellFormed() ? null : { path, message: LONE_SURROGATE };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findIllFormed(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (!key.isWellFormed()) return { path: `${path}.${key.toWellFormed()}`, message: LONE_SURROGATE };
      const found = findIllFormed(item, `${path}.${key}`);
      if (found) return found;
    }
  }
  return null;
}

const LONE_SURROGATE = 'is not well-formed Unicode (it contains a lone UTF-16 surrogate such as \\ud800)';
