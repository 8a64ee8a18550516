import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startRun } from "../daemon/api-shapes.js";
import { textReply } from "../support/scripted-llm-server.js";
import { captureMails } from "../support/mail-capture.js";
import { recordingReceiver } from "../support/recording-receiver.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const kit = useTestKit();

/** The fenced blocks of `language` in the section of docs/<page> under `heading`, as written. */
function blocks(page: string, heading: string, language: string): string[] {
  const text = readFileSync(path.join(ROOT, "docs", page), "utf8");
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`docs/${page} has no "${heading}"`);
  const end = text.indexOf("\n## ", start + heading.length);
  const section = text.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map(
    (match) => match[1] as string,
  );
}

const SMTP_PASSWORD = "smtp-password-of-the-example";
const GITHUB_SECRET = "github-webhook-secret-of-the-example";
const VERDICT_SECRET = `whsec_${Buffer.from("verdict-signing-key-of-the-example").toString("base64")}`;

/**
 * The worked examples of docs/deliveries.md and docs/triggers.md, as written (only the example
 * hosts pointed at local receivers): the nightly digest reaches Slack and an inbox, and a GitHub
 * pull-request webhook starts the reviewer whose verdict goes back as a signed webhook.
 */
describe("the docs' worked examples", () => {
  it(
    "deliver the nightly digest to Slack and email, and a pull request's verdict as a webhook",
    {
      timeout: 120_000,
    },
    async () => {
      const slack = await recordingReceiver(kit);
      const ci = await recordingReceiver(kit);
      const {
        mails,
        port: smtpPort,
        close,
      } = await captureMails({
        authOptional: false,
        allowInsecureAuth: true,
        disabledCommands: ["STARTTLS"],
        onAuth(auth, _session, callback) {
          if (auth.username === "digest@example.com" && auth.password === SMTP_PASSWORD)
            callback(null, { user: auth.username });
          else callback(new Error("bad login"));
        },
      });
      kit.defer(close);

      // docs/deliveries.md: the config (SMTP at the local server) and the digest agent.
      const digestHeading = "## A worked example: a nightly digest to Slack and email";
      const [configText] = blocks("deliveries.md", digestHeading, "yaml");
      const [digestAgent] = blocks("deliveries.md", digestHeading, "markdown");
      const deliveries = (parse(configText ?? "") as { deliveries: { smtp: Record<string, unknown> } })
        .deliveries;
      deliveries.smtp = {
        ...deliveries.smtp,
        host: "127.0.0.1",
        port: smtpPort,
        // The local stand-in speaks no TLS (test/deliveries/email-tls.test.ts covers TLS).
        require_tls: false,
      };
      // docs/triggers.md: the reviewer, its verdicts sent to the local CI.
      const [reviewerAgent] = blocks(
        "triggers.md",
        "## A worked example: a pull-request reviewer",
        "markdown",
      );

      const { llm, project } = await kit.scriptedProject(undefined, {
        config: { vault: { backend: "env" }, deliveries },
      });
      llm.setDefaultReply((request) =>
        textReply(
          JSON.stringify(request.body?.messages ?? []).includes("example/app/pull/7")
            ? "Verdict: request changes. The new endpoint has no test."
            : "3 pull requests merged yesterday.",
        ),
      );
      project.writeAgent("nightly-digest.md", digestAgent ?? "");
      project.writeAgent(
        "pr-reviewer.md",
        (reviewerAgent ?? "").replace("https://ci.example.com/agentd/verdicts", `${ci.url}/agentd/verdicts`),
      );
      const daemon = await kit.daemon(project.configFile, {
        environment: {
          AGENTD_SECRET_SMTP_PASSWORD: SMTP_PASSWORD,
          AGENTD_SECRET_SLACK_DIGEST_URL: `${slack.url}/services/T0/B0/digest-channel-token`,
          AGENTD_SECRET_SLACK_ALERTS_URL: `${slack.url}/services/T0/B1/alerts-channel-token`,
          AGENTD_SECRET_GITHUB_WEBHOOK: GITHUB_SECRET,
          AGENTD_SECRET_VERDICT_SIGNING: VERDICT_SECRET,
        },
      });

      // The digest (its schedule is 07:00 on weekdays: started by hand here).
      await startRun(daemon, "nightly-digest", "the digest, now");
      const mail = await waitFor(() => mails[0], "the digest by email");
      expect(mail.to).toEqual(["lead@example.com"]);
      expect(mail.data).toContain("Subject: Digest completed: nightly-digest");
      expect(mail.data).toContain("3 pull requests merged yesterday.");
      const posted = await waitFor(() => slack.received[0], "the digest in Slack");
      expect(posted.path).toBe("/services/T0/B0/digest-channel-token");
      expect(JSON.parse(posted.body)).toEqual({ text: expect.stringContaining("3 pull requests merged") });

      // GitHub says a pull request was opened, signed with the shared secret.
      const payload = JSON.stringify({
        action: "opened",
        pull_request: {
          html_url: "https://github.com/example/app/pull/7",
          title: "Add the export endpoint",
          draft: false,
          user: { login: "octocat" },
        },
      });
      const hook = await fetch(`${daemon.url}/hooks/pr-reviewer/github-pr`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "pull_request",
          "x-github-delivery": randomUUID(),
          "x-hub-signature-256": `sha256=${createHmac("sha256", GITHUB_SECRET).update(payload).digest("hex")}`,
        },
        body: payload,
      });
      expect(hook.status).toBe(202);
      const { run } = (await hook.json()) as { run: string };
      const verdict = await waitFor(() => ci.received[0], "the verdict at the CI");
      expect(verdict.path).toBe("/agentd/verdicts");
      // The CI checks it as the docs say, with the Standard Webhooks library.
      expect(new Webhook(VERDICT_SECRET).verify(verdict.body, verdict.headers)).toMatchObject({
        type: "run.completed",
        data: {
          agent: "pr-reviewer",
          run,
          status: "completed",
          result: "Verdict: request changes. The new endpoint has no test.",
        },
      });
      // The run's task came from the payload, through the trigger's template.
      const record = (await daemon.request("GET", `/runs/${run}`)).body as {
        task: string;
        trigger: { kind: string; name: string };
      };
      expect(record.task).toContain("https://github.com/example/app/pull/7");
      expect(record.trigger).toMatchObject({ kind: "webhook", name: "github-pr" });
    },
  );
});
