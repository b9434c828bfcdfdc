import { createHash } from 'node:crypto';

/**
 * What a migration's checksum covers: its SQL, not its prose (src/db/migrations/README.md#checksums).
 * `-- …` line comments are dropped and every run of whitespace outside quotes becomes one space, so
 * a comment can be corrected in an applied migration; a change to anything else — a keyword, a
 * name, the text of a string literal, a quoted identifier, a dollar-quoted function body (kept
 * byte for byte, comments and all), a block comment — still changes the checksum.
 */
export function sqlWithoutComments(sql: string): string {
  let out = '';
  let space = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql.charAt(i);
    if (c === '-' && sql.charAt(i + 1) === '-') {
      const newline = sql.indexOf('\n', i);
      i = newline === -1 ? sql.length : newline;
      space = true;
      continue;
    }
    if (/\s/.test(c)) {
      space = true;
      i++;
      continue;
    }
    if (space && out !== '') out += ' ';
    space = false;
    const end = endOfToken(sql, i);
    out += sql.slice(i, end);
    i = end;
  }
  return out;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The checksum recorded for a migration applied from now on. */
export function migrationChecksum(sql: string): string {
  return sha256(sqlWithoutComments(sql));
}

const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y;

/** Where the token starting at `start` ends: a quoted string, identifier or block comment whole. */
function endOfToken(sql: string, start: number): number {
  const c = sql.charAt(start);
  const before = sql.charAt(start - 1);
  if (c === "'") {
    // E'…' strings take backslash escapes; standard strings only the doubled quote.
    const escaped = /[eE]/.test(before) && !IDENTIFIER_CHAR.test(sql.charAt(start - 2));
    return endOfQuoted(sql, start, "'", escaped);
  }
  if (c === '"') return endOfQuoted(sql, start, '"', false);
  if (c === '$' && !IDENTIFIER_CHAR.test(before)) {
    DOLLAR_TAG.lastIndex = start;
    const tag = DOLLAR_TAG.exec(sql)?.[0];
    if (tag) {
      const close = sql.indexOf(tag, start + tag.length);
      return close === -1 ? sql.length : close + tag.length;
    }
  }
  if (c === '/' && sql.charAt(start + 1) === '*') return endOfBlockComment(sql, start);
  return start + 1;
}

function endOfQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql.charAt(i);
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (sql.charAt(i + 1) !== quote) return i + 1;
      i += 2;
    } else {
      i++;
    }
  }
  return sql.length;
}

/** Block comments nest in PostgreSQL; they are kept (hashed) whole, never parsed for quotes. */
function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return sql.length;
}

/**
 * Migrations whose comments were corrected after earlier releases had recorded the sha256 of their
 * whole text (their citations of a design note outside the repository became docs/ anchors): that
 * old figure, and the checksum of the SQL it covered. A database holding the old figure is upgraded
 * without complaint as long as the SQL is still that SQL; a change to it is refused as any other.
 * test/db/legacy-migrations/ keeps the old texts, and a test checks these figures against them.
 */
export const LEGACY_CHECKSUMS: Readonly<Record<string, { wholeText: string; sql: string }>> = {
  '0019_delivery_claims_count': {
    wholeText: '4f45959cdc73a75b4a97a35591e89f114ea29d499de2d743e278f8375cb1f5c7',
    sql: '59618528162e5eb1e1c0b4d3fd262a26e7fdeab4c5a29ccd0ae17f6798aad420',
  },
  '0020_retention': {
    wholeText: '2f7a4ca98a6f9ca46b003d0dbf5a4f1abeb2bd25a8096594ef2c0eea8d9b807f',
    sql: '28d7334cd6c708a9f6f881ee596a33afb45a399a512a622dbbb657c68909c5c1',
  },
  '0021_dashboard_sign_in': {
    wholeText: 'f54f7e77041ec98ea664d57e7b43a5253427366945355505eb618ccbd10192c0',
    sql: 'e8e5a9ef1a9fc5c84d39cfba0296348a56ac7245b433df642faaa7c5f36f1572',
  },
  '0022_deposits': {
    wholeText: '323812aef3f653d496c418e8a585253d1d6df4d5e1358d7d481a956e9a7a411f',
    sql: 'a9722cb3dbda626a18b353e8f7753d7c028374d1d07cf706200a2b282387044e',
  },
  '0024_instance_settings': {
    wholeText: 'e9ffae205473f92f49f99cac63da603221a86cc84bd845341667cebd3d2a6182',
    sql: '739b515a2cf5549c95798c8998d62b1df21b0f4b3f6dc96a3561254145d1e720',
  },
};
