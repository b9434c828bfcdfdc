import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api';

/** A button that copies `text` and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

/** An error from the API, as its message and code. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text =
    error instanceof ApiError
      ? `${error.message} (${error.code})`
      : String((error as Error).message ?? error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Card({
  title,
  children,
  class: className,
}: {
  title?: string;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <section class={className ? `card ${className}` : 'card'}>
      {title && <h2>{title}</h2>}
      {children}
    </section>
  );
}

export function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div class="stat">
      <span class="stat-label">{label}</span>
      <strong class="stat-value">{value}</strong>
      {note && <span class="stat-note">{note}</span>}
    </div>
  );
}

/** Runs an action, keeping its error to show, and its busy state to disable the button. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

/** A column whose figures align right (amounts, counts, times taken). */
export const num = (title: string) => ({ title, num: true });

/**
 * A table of rows (the children: `<tr>`s), named for screen readers and tests, that scrolls inside
 * its card on a narrow screen, so that the page never does.
 */
export function Table({
  label,
  columns,
  children,
}: {
  label: string;
  /** `num`: figures, aligned right; `wide`: a column a narrow screen leaves out (class `wide`). */
  columns: (string | { title: string; num?: boolean; wide?: boolean })[];
  children: ComponentChildren;
}) {
  return (
    <div class="table-scroll">
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((column, i) =>
              typeof column === 'string' ? (
                <th key={i}>{column}</th>
              ) : (
                <th key={i} class={[column.num && 'num', column.wide && 'wide'].filter(Boolean).join(' ')}>
                  {column.title}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A button of a table row: its label says what it does, and the row's subject (the element with id
 * `subject`: a key's name, a job's id) describes it, so that the label need not repeat it.
 */
export function RowAction({
  label,
  subject,
  busy = false,
  danger = false,
  onClick,
}: {
  label: string;
  subject: string;
  busy?: boolean;
  danger?: boolean;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      class={danger ? 'danger' : 'secondary'}
      aria-describedby={subject}
      disabled={busy}
      onClick={onClick}
    >
      {label}
    </button>
  );
}

/** What an action just did, said once it is done (a screen reader hears it too). */
export function Done({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <p class="note" role="status">
      {text}
    </p>
  );
}
