// Small pieces every view uses: times, status pills, errors, pages of a long list.

import type { ComponentChildren } from "preact";
import type { ErrorDetail } from "./api-types.js";
import { exactTime, relativeTime } from "./time-format.js";
import { visibleText } from "./visible-text.js";

/** "5 min ago", the exact local time on hover and for screen readers (`<time datetime>`). */
export function RelativeTime({ time, now }: { time: string | null | undefined; now: Date }) {
  if (!time) return <span class="muted">–</span>;
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return <span class="muted">–</span>;
  const exact = exactTime(date);
  return (
    <time dateTime={time} title={exact} aria-label={exact}>
      {relativeTime(date, now)}
    </time>
  );
}

/** A run status (or any state word) as a coloured pill with text, never colour alone. */
export function StatusPill({ status, reason }: { status: string; reason?: string | null | undefined }) {
  return (
    <span class={`pill pill-${status}`} title={reason ? `${status}: ${reason}` : status}>
      {status}
      {reason ? <span class="pill-reason"> · {reason.replaceAll("_", " ")}</span> : null}
    </span>
  );
}

/** The "unsandboxed" mark of an agent, or of a run, whose sandbox is off or shares the host's network. */
export function UnsandboxedBadge() {
  return (
    <span
      class="pill pill-unsandboxed"
      title="its sandbox is off or shares the host's network: its commands can reach what the daemon can"
    >
      unsandboxed
    </span>
  );
}

/** An error of a definition with where it is: file, line, field, then what to do. */
export function ErrorLine({ detail, text }: { detail: ErrorDetail | undefined; text: string }) {
  if (detail === undefined) return <li class="error-line">{text}</li>;
  const where = [detail.file && (detail.line ? `${detail.file}:${detail.line}` : detail.file), detail.field]
    .filter(Boolean)
    .join(" · ");
  return (
    <li class="error-line">
      {where ? <code class="where">{where}</code> : null} <span>{detail.message ?? text}</span>
      {detail.hint ? <span class="hint"> — {detail.hint}</span> : null}
    </li>
  );
}

/** A value as indented JSON (arguments, limits), wrapped, never interpreted as HTML. */
export function JsonBlock({ value }: { value: unknown }) {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  // Arguments a model wrote: a bidi override or an invisible character must not change what is read.
  return <pre class="json">{visibleText(text)}</pre>;
}

/** Previous / next page of a long list, with "x–y of n". */
export function Pager(props: {
  page: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
}) {
  const { page, pageSize, total, onPage } = props;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  const first = page * pageSize + 1;
  const last = Math.min(total, (page + 1) * pageSize);
  return (
    <nav class="pager" aria-label="pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        ← Previous
      </button>
      <span class="pager-position">
        {first}–{last} of {total}
      </span>
      <button type="button" disabled={page >= pages - 1} onClick={() => onPage(page + 1)}>
        Next →
      </button>
    </nav>
  );
}

/** A titled block of a view. */
export function Panel(props: { title: ComponentChildren; children: ComponentChildren; class?: string }) {
  return (
    <section class={`panel ${props.class ?? ""}`}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** The message of a failed load, in a live region so a screen reader hears it. */
export function ErrorBanner({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="banner banner-error" role="alert">
      {message}
    </p>
  );
}
