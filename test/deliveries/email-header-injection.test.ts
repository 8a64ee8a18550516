import { describe, expect, it } from "vitest";
import { startRun, waitForRunEnd } from "../daemon/api-shapes.js";
import { captureMails } from "../support/mail-capture.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const kit = useTestKit();

/** A result a hostile model wrote: header lines after line breaks of every kind, and an SMTP end of data. */
const HOSTILE_RESULT = [
  "all good",
  "Bcc: crlf@attacker.test",
  "\nCc: lf@attacker.test",
  "\rReply-To: cr@attacker.test",
  "\u2028To: ls@attacker.test",
  "\u0085Bcc: nel@attacker.test",
  "\r\n.\r\nMAIL FROM:<x@attacker.test>\r\nRCPT TO:<smuggled@attacker.test>",
].join("\r\n");

describe("an email delivery of a hostile run's result", () => {
  it("keeps the result out of the headers and the SMTP conversation", async () => {
    const { mails, port, close } = await captureMails();
    kit.defer(close);
    const { project } = await kit.scriptedProject(textReply(HOSTILE_RESULT), {
      config: {
        deliveries: {
          smtp: { host: "127.0.0.1", port, secure: false },
        },
      },
    });
    project.writeAgent("reader", {
      deliver: [
        {
          to: "email",
          recipients: ["lead@example.test"],
          subject: "Digest: {{result}}",
          template: "{{result}}",
        },
      ],
    });
    const daemon = await kit.daemon(project.configFile);
    await waitForRunEnd(daemon, await startRun(daemon, "reader", "read the page"));
    const [mail] = await waitFor(() => mails.length > 0 && mails, "the email");
    expect(mails).toHaveLength(1);
    expect(mail?.to).toEqual(["lead@example.test"]);
    // Header lines as a mail client reads them: folded continuation lines joined to theirs.
    const headers = (mail?.data.split(/\r\n\r\n/)[0] ?? "").split(/\r\n(?![ \t])/);
    const names = headers.map((line) => line.slice(0, line.indexOf(":")).toLowerCase());
    expect(names.sort()).toEqual([
      "content-transfer-encoding",
      "content-type",
      "date",
      "from",
      "message-id",
      "mime-version",
      "subject",
      "to",
    ]);
    expect(headers.find((line) => line.startsWith("To:"))).toBe("To: lead@example.test");
  });
});
