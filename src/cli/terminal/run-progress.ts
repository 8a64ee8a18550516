import type { ShownEvent } from "./event-line.js";
import { formatEventLine } from "./event-line.js";
import { paint } from "./terminal-style.js";

/** How often the status line is redrawn. */
const FRAME_MILLISECONDS = 100;
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Clears the terminal line the cursor is on and returns to its start. */
const CLEAR_LINE = "\r\u001b[2K";

export interface RunProgressOptions {
  /** Where progress goes (stderr): the result alone goes to stdout. */
  write: (text: string) => void;
  agent: string;
  color: boolean;
  /** A terminal: keep a status line (spinner, what the run waits on, elapsed time) redrawn in place. */
  live: boolean;
  now?: () => number;
}

/** The terminal view of one run: a header, a line per event, and on a terminal a live status line. */
export interface RunProgress {
  /** Shows one event of the run. */
  show(event: ShownEvent): void;
  /** Writes other text (prompts, notices) above the status line. */
  write(text: string): void;
  /** Removes the status line and stops redrawing it. */
  close(): void;
}

/**
 * What the run is waiting on, from its last event. `undefined` hides the status line: the run has
 * ended, or a human is being asked (an approval or a question prompt owns the terminal then).
 */
function waitingOn(event: ShownEvent, data: Record<string, unknown>): string | undefined {
  switch (event.type) {
    case "action":
      return `running ${String(data["tool"] ?? "a tool")}`;
    case "approval":
      return data["state"] === "requested" ? undefined : "waiting for the model";
    case "question":
      return data["state"] === "asked" ? undefined : "waiting for the model";
    case "status":
      return data["status"] === "running" ? "waiting for the model" : undefined;
    default:
      return "waiting for the model";
  }
}

export function createRunProgress(options: RunProgressOptions): RunProgress {
  const now = options.now ?? Date.now;
  let started = false;
  let activity: string | undefined;
  let since = now();
  let frame = 0;
  let drawn = false;
  let timer: NodeJS.Timeout | undefined;

  const clear = () => {
    if (drawn) options.write(CLEAR_LINE);
    drawn = false;
  };
  const draw = () => {
    if (activity === undefined) return;
    const seconds = ((now() - since) / 1000).toFixed(1);
    const spinner = paint(options.color, "cyan", FRAMES[frame % FRAMES.length] ?? "");
    frame += 1;
    options.write(`${CLEAR_LINE}${spinner} ${activity} · ${seconds} s`);
    drawn = true;
  };
  const setActivity = (next: string | undefined) => {
    if (next !== activity) since = now();
    activity = next;
    if (activity === undefined) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    // The run's own promise keeps the process up: the redraw must not.
    timer ??= setInterval(draw, FRAME_MILLISECONDS).unref();
  };
  const write = (text: string) => {
    clear();
    options.write(text);
    if (options.live) draw();
  };

  return {
    show(event) {
      clear();
      if (!started)
        options.write(paint(options.color, "bold", `▶ ${options.agent} · run ${event.run ?? "?"}\n`));
      started = true;
      // The result goes to stdout on its own, after the run.
      if (event.type !== "result")
        options.write(`${formatEventLine(event, { color: options.color, cursor: false })}\n`);
      if (!options.live) return;
      const data =
        typeof event.data === "object" && event.data !== null ? (event.data as Record<string, unknown>) : {};
      setActivity(waitingOn(event, data));
      draw();
    },
    write,
    close() {
      setActivity(undefined);
      clear();
    },
  };
}
