// What waits for a person: tool calls to approve or deny, questions to answer.

import { useState } from "preact/hooks";
import { useAllowed } from "../session.js";
import { describeError, postJson } from "../api-client.js";
import type { PendingApproval, PendingQuestion } from "../api-types.js";
import { notifyApprovalsChanged, usePendingItems } from "../approvals-count.js";
import { ErrorBanner, Panel, RelativeTime } from "../components.js";
import { useNow } from "../hooks.js";
import { routeHref } from "../route.js";
import { ApprovalButtons } from "./approval-buttons.js";
import { ApprovalCall } from "./approval-call.js";
import { Countdown } from "./run-view.js";

export function ApprovalsView() {
  const pending = usePendingItems();
  const now = useNow(1_000);
  return (
    <div class="view">
      <header class="view-header">
        <h1>Approvals</h1>
        <p class="muted">Tool calls an agent may only make once a person agrees, oldest first.</p>
      </header>
      <ErrorBanner message={pending.error} />
      {pending.approvals.length === 0 ? <p class="empty">Nothing waits for an approval.</p> : null}
      <ul class="cards">
        {pending.approvals.map((approval) => (
          <ApprovalCard key={approval.id} approval={approval} now={now} />
        ))}
      </ul>
      {pending.questions !== undefined ? (
        <Panel title={`Questions (${pending.questions.length})`}>
          {pending.questions.length === 0 ? <p class="empty">No agent asks anything.</p> : null}
          <ul class="cards">
            {pending.questions.map((question) => (
              <QuestionCard key={question.id} question={question} now={now} />
            ))}
          </ul>
        </Panel>
      ) : null}
    </div>
  );
}

function ApprovalCard({ approval, now }: { approval: PendingApproval; now: Date }) {
  return (
    <li class="card" data-approval={approval.id}>
      <div class="card-head">
        <code class="tool">{approval.tool}</code>
        <span>
          by <a href={routeHref({ view: "agent", agent: approval.agent })}>{approval.agent}</a> in{" "}
          <a href={routeHref({ view: "run", run: approval.run })}>
            <code>{approval.run}</code>
          </a>
        </span>
        {approval.expires_at ? <Countdown until={approval.expires_at} now={now} /> : null}
      </div>
      <p class="muted">
        Requested <RelativeTime time={approval.requested_at} now={now} />
        {approval.on_timeout
          ? ` · without an answer it is ${approval.on_timeout === "approve" ? "approved" : "denied"}`
          : ""}
      </p>
      <ApprovalCall tool={approval.tool} arguments={approval.arguments} reason={approval.reason} />
      <ApprovalButtons approvalId={approval.id} />
    </li>
  );
}

function QuestionCard({ question, now }: { question: PendingQuestion; now: Date }) {
  const [answer, setAnswer] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const mayAnswer = useAllowed("approve");
  const send = async (text: string) => {
    if (text.trim() === "") return;
    setBusy(true);
    setError(undefined);
    try {
      await postJson(`/questions/${encodeURIComponent(question.id)}`, { answer: text });
      notifyApprovalsChanged();
    } catch (caught) {
      setError(describeError(caught));
      setBusy(false);
    }
  };
  return (
    <li class="card" data-question={question.id}>
      <div class="card-head">
        <span>
          <a href={routeHref({ view: "agent", agent: question.agent })}>{question.agent}</a> asks in{" "}
          <a href={routeHref({ view: "run", run: question.run })}>
            <code>{question.run}</code>
          </a>
        </span>
        {question.expires_at ? <Countdown until={question.expires_at} now={now} /> : null}
      </div>
      <p class="question">{question.question}</p>
      {!mayAnswer ? (
        <p class="muted role-note">Answering needs a token of role approve.</p>
      ) : question.choices && question.choices.length > 0 ? (
        <div class="approval-buttons">
          {question.choices.map((choice) => (
            <button key={choice} type="button" disabled={busy} onClick={() => void send(choice)}>
              {choice}
            </button>
          ))}
        </div>
      ) : (
        <form
          class="answer-form"
          onSubmit={(event) => {
            event.preventDefault();
            void send(answer);
          }}
        >
          <label for={`answer-${question.id}`} class="visually-hidden">
            Answer
          </label>
          <input
            id={`answer-${question.id}`}
            value={answer}
            onInput={(event) => setAnswer(event.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={busy || answer.trim() === ""}>
            Answer
          </button>
        </form>
      )}
      <ErrorBanner message={error} />
    </li>
  );
}
