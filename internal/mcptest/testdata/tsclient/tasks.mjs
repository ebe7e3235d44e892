// tasks.mjs drives a TypeScript SDK client for mcpvcr's task tests: it
// connects (over stdio: node tasks.mjs stdio CMD ARGS...; over Streamable
// HTTP: node tasks.mjs http URL) and runs one task scenario, then prints
// what it saw as one line of JSON on stdout.
//
// $MODE=poll (default): calls simulate-research-query as a task
// (params.task) and polls tasks/get every $POLL_MS ms (default 250) until
// a terminal status, then calls tasks/result. $EXTRA_POLLS more polls are
// sent after the terminal status.
// $MODE=notify: the same call, but never polls: it waits for
// notifications/tasks/status until a terminal status (at most 20 s), then
// calls tasks/result.
// $MODE=client: the client runs tasks (capability tasks.requests
// elicitation and sampling): calls $TOOL (default
// trigger-elicitation-request-async), whose server asks the client to run
// an elicitation as a task; the client's task completes after
// $CLIENT_TASK_MS ms (default 1500) with the name $ANSWER (default ts).
// With $FORGET=1 the client answers with a task it does not keep, so it
// answers the server's tasks/get and tasks/result with errors.
// $CLIENT_NAME names the client in initialize.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import {
  CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, CreateMessageRequestSchema,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [transportKind, ...rest] = process.argv.slice(2);
const mode = process.env.MODE || "poll";
const pollMs = Number(process.env.POLL_MS || 250);
const extraPolls = Number(process.env.EXTRA_POLLS || 0);
const clientTaskMs = Number(process.env.CLIENT_TASK_MS || 1500);
const tool = process.env.TOOL || "trigger-elicitation-request-async";
const name = process.env.CLIENT_NAME || "ts-client";
const answerName = process.env.ANSWER || "ts";
const forget = process.env.FORGET === "1";
const transport = transportKind === "stdio"
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const capabilities = mode === "client"
  ? { elicitation: {}, sampling: {}, tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } } }
  : {};
const client = new Client({ name, version: "1.0.0" },
  { capabilities, ...(mode === "client" ? { taskStore: new InMemoryTaskStore() } : {}) });
const out = { statuses: [], notified: [], polls: 0 };
const terminal = (s) => s === "completed" || s === "failed" || s === "cancelled";
let finished = () => {};
const done = new Promise((resolve) => { finished = resolve; });
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
  out.notified.push(n.params.status);
  if (terminal(n.params.status)) finished(n.params.status);
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

if (mode === "client") {
  // The client's own task: created at once, completed a while later.
  const run = (answer) => async (req, extra) => {
    if (!req.params.task) return answer;
    if (forget) {
      const now = new Date().toISOString();
      return { task: { taskId: "forgotten", status: "working", ttl: req.params.task.ttl, createdAt: now, lastUpdatedAt: now, pollInterval: 500 } };
    }
    const task = await extra.taskStore.createTask({ ttl: req.params.task.ttl, pollInterval: 500 });
    setTimeout(() => { extra.taskStore.storeTaskResult(task.taskId, "completed", answer).catch(() => {}); }, clientTaskMs);
    return { task };
  };
  client.setRequestHandler(ElicitRequestSchema, run({ action: "accept", content: { name: answerName } }));
  client.setRequestHandler(CreateMessageRequestSchema, run({
    model: "test-model", role: "assistant", content: { type: "text", text: "answer from " + answerName },
  }));
}

await client.connect(transport);
if (mode === "client") {
  const r = await client.callTool({ name: tool, arguments: tool.includes("sampling") ? { prompt: "hi" } : {} }, undefined, { timeout: 30000 });
  out.result = r.content.map((c) => c.text).join("\n").split("\n").filter((l) => !/Task created|Poll \d/.test(l) && !l.includes("taskId") && !l.includes('"createdAt"') && !l.includes('"lastUpdatedAt"')).slice(0, 3);
} else {
  const created = await client.request({
    method: "tools/call",
    params: { name: "simulate-research-query", arguments: { topic: "tasks" }, task: { ttl: 300000 } },
  }, CreateTaskResultSchema);
  const id = created.task.taskId;
  out.statuses.push(created.task.status);
  out.ttl = created.task.ttl;
  out.created = created.task.createdAt;
  let status = created.task.status;
  if (mode === "notify") {
    const timer = setTimeout(() => finished("timeout"), 20000);
    status = await done;
    clearTimeout(timer);
    out.statuses.push(status);
  } else {
    while (!terminal(status)) {
      await sleep(pollMs);
      const t = await client.experimental.tasks.getTask(id);
      out.polls++;
      if (t.status !== out.statuses[out.statuses.length - 1]) out.statuses.push(t.status);
      status = t.status;
      out.updated = t.lastUpdatedAt;
    }
    for (let i = 0; i < extraPolls; i++) {
      const t = await client.experimental.tasks.getTask(id);
      out.polls++;
      out.extra = t.status;
    }
  }
  const r = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
  out.result = r.content[0].text.split("\n")[0];
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
