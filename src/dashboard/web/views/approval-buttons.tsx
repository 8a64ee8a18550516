// Approve / Approve for this run / Deny for one pending approval.

import { useState } from "preact/hooks";
import { describeError, postJson } from "../api-client.js";
import { ErrorBanner } from "../components.js";
import { notifyApprovalsChanged } from "../approvals-count.js";
import { useAllowed } from "../session.js";

export function ApprovalButtons({ approvalId, onDone }: { approvalId: string; onDone?: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const allowed = useAllowed("approve");
  const decide = async (decision: "approve" | "deny", scope: "once" | "run") => {
    setBusy(true);
    setError(undefined);
    try {
      await postJson(`/approvals/${encodeURIComponent(approvalId)}`, { decision, scope });
      notifyApprovalsChanged();
      onDone?.();
    } catch (caught) {
      setError(describeError(caught));
      setBusy(false);
    }
  };
  if (!allowed) return <p class="muted role-note">Answering needs a token of role approve.</p>;
  return (
    <div class="approval-buttons">
      <button type="button" class="primary" disabled={busy} onClick={() => void decide("approve", "once")}>
        Approve
      </button>
      <button type="button" disabled={busy} onClick={() => void decide("approve", "run")}>
        Approve for this run
      </button>
      <button type="button" class="danger" disabled={busy} onClick={() => void decide("deny", "once")}>
        Deny
      </button>
      <ErrorBanner message={error} />
    </div>
  );
}
