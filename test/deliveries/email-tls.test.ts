import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { SMTPServer } from "smtp-server";
import { beforeAll, describe, expect, it } from "vitest";
import { startRun } from "../daemon/api-shapes.js";
import type { DaemonProcess } from "../support/daemon-process.js";
import { textReply } from "../support/scripted-llm-server.js";
import { useTestKit } from "../support/test-kit.js";
import { waitFor } from "../support/wait-for.js";

const SMTP_PASSWORD = "smtp-password-over-tls";

function hasOpenssl(): boolean {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A self-signed certificate for 127.0.0.1, made now (no key is committed): `<name>.key`, `<name>.pem`. */
function makeCertificate(folder: string, name: string): { key: Buffer; cert: Buffer; certFile: string } {
  const keyFile = path.join(folder, `${name}.key`);
  const certFile = path.join(folder, `${name}.pem`);
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
      .concat(["-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", `/CN=agentd test ${name}`])
      .concat(["-addext", "subjectAltName=IP:127.0.0.1"]),
    { stdio: "ignore" },
  );
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile };
}

interface Mail {
  secure: boolean;
  user: string;
  method: string;
  to: string[];
  data: string;
}

interface Delivery {
  run: string | null;
  status: string;
  attempts: Array<{ ok: boolean; error?: string }>;
  last_error?: string | null;
}

/**
 * Email over TLS, black-box: real SMTP servers (smtp-server) with a certificate made in the test, and
 * the built daemon trusting it through NODE_EXTRA_CA_CERTS. One daemon sends over STARTTLS with AUTH
 * LOGIN, the other over TLS from the first byte (`secure: true`) with AUTH PLAIN; a certificate the
 * daemon does not trust fails the delivery at once, its error naming the certificate problem, and a
 * STARTTLS stripped from the server's offer fails it without the login ever crossing in clear.
 */
describe.skipIf(!hasOpenssl())("email over TLS", { timeout: 90_000 }, () => {
  const kit = useTestKit("file");
  const mails: Mail[] = [];
  let starttlsDaemon: DaemonProcess;
  let implicitDaemon: DaemonProcess;
  let implicitServer: SMTPServer;
  let untrusted: { key: Buffer; cert: Buffer };
  let stripStartTls = false;
  let clearLogins = 0;

  /** An SMTP server that takes only `method` logins, and only after TLS. */
  async function smtpServer(secure: boolean, method: string, certificate: { key: Buffer; cert: Buffer }) {
    const server = new SMTPServer({
      secure,
      ...certificate,
      authMethods: [method],
      // Taken, so that a login sent in clear would be seen (and counted) rather than refused.
      allowInsecureAuth: true,
      authOptional: false,
      onConnect(session, callback) {
        // A man in the middle removing STARTTLS from the server's offer.
        if (stripStartTls) session.disabledCommands = ["STARTTLS"];
        callback();
      },
      onAuth(auth, session, callback) {
        if (!session.secure) clearLogins += 1;
        if (auth.username === "agentd" && auth.password === SMTP_PASSWORD)
          callback(null, { user: `${auth.username}:${auth.method}` });
        else callback(new Error("bad login"));
      },
      onData(stream, session, callback) {
        let data = "";
        stream.setEncoding("utf8").on("data", (chunk: string) => (data += chunk));
        stream.on("end", () => {
          const [user = "", usedMethod = ""] = String(session.user).split(":");
          mails.push({
            secure: session.secure,
            user,
            method: usedMethod,
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            data,
          });
          callback();
        });
      },
    });
    // A client refusing the certificate closes the socket mid-handshake: the server reports it.
    server.on("error", () => undefined);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    kit.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return server;
  }

  async function daemonFor(server: SMTPServer, secure: boolean, caFile: string) {
    const { project } = await kit.scriptedProject(textReply("The digest is ready."), {
      config: {
        vault: { backend: "env" },
        deliveries: {
          smtp: {
            host: "127.0.0.1",
            port: (server.server.address() as AddressInfo).port,
            secure,
            user: "agentd",
            password: "{{secret:smtp_password}}",
          },
        },
      },
    });
    project.writeAgent("digest", {
      description: "Sends its digest by email",
      deliver: [{ to: "email", recipients: ["lead@example.test"], subject: "Digest {{status}}" }],
    });
    return kit.daemon(project.configFile, {
      environment: { NODE_EXTRA_CA_CERTS: caFile, AGENTD_SECRET_SMTP_PASSWORD: SMTP_PASSWORD },
    });
  }

  async function deliveryOf(daemon: DaemonProcess, run: string, status: string): Promise<Delivery> {
    return waitFor(async () => {
      const reply = await daemon.request("GET", `/deliveries?run=${run}`);
      return (reply.body as { deliveries: Delivery[] }).deliveries.find((item) => item.status === status);
    }, `the ${status} delivery of ${run}`);
  }

  beforeAll(async () => {
    const folder = mkdtempSync(path.join(tmpdir(), "agentd-email-tls-"));
    kit.defer(() => rmSync(folder, { recursive: true, force: true }));
    const trusted = makeCertificate(folder, "trusted");
    untrusted = makeCertificate(folder, "untrusted");
    const starttlsServer = await smtpServer(false, "LOGIN", trusted);
    implicitServer = await smtpServer(true, "PLAIN", trusted);
    [starttlsDaemon, implicitDaemon] = await Promise.all([
      daemonFor(starttlsServer, false, trusted.certFile),
      daemonFor(implicitServer, true, trusted.certFile),
    ]);
  });

  it("sends over STARTTLS with AUTH LOGIN to a server the daemon trusts", async () => {
    const run = await startRun(starttlsDaemon, "digest", "the digest");
    expect((await deliveryOf(starttlsDaemon, run, "sent")).attempts).toHaveLength(1);
    const mail = mails.find((item) => item.method === "LOGIN");
    expect(mail).toMatchObject({ secure: true, user: "agentd", to: ["lead@example.test"] });
    expect(mail?.data).toContain("Subject: Digest completed");
    expect(mail?.data).toContain("The digest is ready.");
  });

  it("sends over TLS from the first byte (secure: true) with AUTH PLAIN", async () => {
    const run = await startRun(implicitDaemon, "digest", "the digest");
    expect((await deliveryOf(implicitDaemon, run, "sent")).attempts).toHaveLength(1);
    expect(mails.find((item) => item.method === "PLAIN")).toMatchObject({ secure: true, user: "agentd" });
  });

  it("fails at once, naming the certificate problem, when the server's certificate is not trusted", async () => {
    // The same server now presents a self-signed certificate the daemon was never told to trust.
    implicitServer.updateSecureContext(untrusted);
    const sentBefore = mails.length;
    const run = await startRun(implicitDaemon, "digest", "the digest");
    const delivery = await deliveryOf(implicitDaemon, run, "failed");
    expect(delivery.attempts).toHaveLength(1);
    const error = delivery.attempts[0]?.error ?? "";
    expect(error).toContain("TLS certificate is not trusted");
    expect(error).toContain("self-signed certificate");
    expect(error).not.toContain(SMTP_PASSWORD);
    expect(mails).toHaveLength(sentBefore);
  });

  it("never logs in over a connection whose STARTTLS was stripped", async () => {
    stripStartTls = true;
    const sentBefore = mails.length;
    const run = await startRun(starttlsDaemon, "digest", "the digest");
    const delivery = await deliveryOf(starttlsDaemon, run, "failed");
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]?.error).toContain("the server did not start TLS");
    expect(clearLogins).toBe(0);
    expect(mails).toHaveLength(sentBefore);
  });
});
