// Signet Desktop plugin for OpenCode -- installed by `signet install opencode`, removed by
// `signet uninstall opencode`. It calls the local Signet daemon's hook routes and never
// blocks OpenCode: every call has a short timeout and any failure is ignored (fail-open).
//   SIGNET_DAEMON_URL  daemon base URL (default http://127.0.0.1:3850)
//   SIGNET_ENABLED=false, SIGNET_NO_HOOKS=1 or SIGNET_BYPASS=1  disable the plugin

const BASE = (process.env.SIGNET_DAEMON_URL || "http://127.0.0.1:3850").replace(/\/+$/, "");
const OFF = (name) => ["1", "true", "yes"].includes(String(process.env[name] || "").toLowerCase());
const DISABLED =
  String(process.env.SIGNET_ENABLED || "").toLowerCase() === "false" ||
  OFF("SIGNET_NO_HOOKS") ||
  OFF("SIGNET_BYPASS");
const HEADERS = {
  "content-type": "application/json",
  "x-signet-runtime-path": "plugin",
  "x-signet-actor": "opencode-plugin",
  "x-signet-actor-type": "harness",
};
const TIMEOUT_MS = {
  "session-start": 5000,
  "user-prompt-submit": 2000,
  "pre-compaction": 2000,
  "compaction-complete": 5000,
  "session-end": 10000,
};

async function hook(event, body) {
  if (DISABLED) return null;
  try {
    const response = await fetch(`${BASE}/api/hooks/${event}`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ harness: "opencode", runtimePath: "plugin", ...body }),
      signal: AbortSignal.timeout(TIMEOUT_MS[event] ?? 2000),
    });
    return response.ok ? await response.json() : null;
  } catch {
    return null; // daemon down, slow or refusing: OpenCode carries on
  }
}

function textOf(parts) {
  return (parts || [])
    .filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n")
    .trim();
}

export const SignetPlugin = async ({ client, directory }) => {
  const started = new Set();
  const project = directory;

  async function transcript(sessionID) {
    try {
      const answer = await client.session.messages({ path: { id: sessionID } });
      return (answer.data || []).map((entry) => ({
        role: entry.info?.role,
        content: textOf(entry.parts),
      }));
    } catch {
      return undefined;
    }
  }

  return {
    "chat.message": async (input, output) => {
      const sessionKey = input.sessionID;
      const injects = [];
      if (!started.has(sessionKey)) {
        started.add(sessionKey);
        const start = await hook("session-start", { sessionKey, project });
        if (start?.inject) injects.push(start.inject);
      }
      const userMessage = textOf(output.parts);
      if (userMessage) {
        const prompt = await hook("user-prompt-submit", { sessionKey, project, userMessage });
        if (prompt?.inject) injects.push(prompt.inject);
      }
      if (injects.length && Array.isArray(output.parts)) {
        const first = output.parts[0] || {};
        output.parts.push({
          ...(first.id ? { id: `${first.id}-signet` } : {}),
          sessionID: first.sessionID ?? sessionKey,
          messageID: first.messageID ?? input.messageID,
          type: "text",
          text: injects.join("\n\n"),
          synthetic: true,
        });
      }
    },
    "experimental.session.compacting": async (input, output) => {
      const answer = await hook("pre-compaction", { sessionKey: input.sessionID, project });
      if (answer?.guidelines && Array.isArray(output.context)) output.context.push(answer.guidelines);
    },
    event: async ({ event }) => {
      const sessionKey = event?.properties?.sessionID ?? event?.properties?.info?.id;
      if (!sessionKey) return;
      if (event.type === "session.idle" || event.type === "session.deleted") {
        const messages = event.type === "session.idle" ? await transcript(sessionKey) : undefined;
        await hook("session-end", {
          sessionKey,
          project,
          reason: event.type,
          ...(messages ? { transcript: messages } : {}),
        });
      } else if (event.type === "session.compacted") {
        const summary = event.properties?.summary;
        if (typeof summary === "string" && summary) {
          await hook("compaction-complete", { sessionKey, project, summary });
        }
      }
    },
  };
};

export default SignetPlugin;
