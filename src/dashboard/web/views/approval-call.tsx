// The call an approval is about, shown beside its buttons: the tool, its arguments and the rule
// that asked, so what is approved is on screen wherever it can be approved.

import { JsonBlock } from "../components.js";

export function ApprovalCall(props: { tool: string; arguments: unknown; reason: string | undefined }) {
  return (
    <div class="approval-call">
      <p class="approval-call-line">
        <span class="muted">Approve</span> <code class="tool">{props.tool}</code>
        {props.reason ? <span class="reason"> · asks because: {props.reason}</span> : null}
      </p>
      <h3 class="visually-hidden">Arguments</h3>
      <JsonBlock value={props.arguments ?? {}} />
    </div>
  );
}
