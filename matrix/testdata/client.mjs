// client.mjs is the TypeScript SDK client of mcpvcr's matrix (package
// matrix): node client.mjs TRANSPORT TARGET, where TRANSPORT is stdio
// (TARGET: the server command as a JSON array), http (Streamable HTTP) or
// sse (2024-11-05 HTTP+SSE), TARGET then the URL. It connects as
// $CLIENT_NAME, runs the steps of $PLAN (JSON, the matrix's step type:
// tools/list or tools/call with an optional progress token, cancelled at a
// progress value, waiting for a progress value), waits until $NOTES
// notifications outside the steps' progress came (at most 5 s), closes,
// and prints what it saw as one line of JSON on stdout: the matrix's
// Transcript, and serverExit over stdio. With $ALT=1 it answers sampling
// and elicitation otherwise. The transport's reconnection options are the
// SDK's defaults, as a user's would be.
//
// Tasks (package matrix's tasks_test.go): a call step with task "poll"
// calls the tool as a task (params.task) and polls tasks/get every
// `every` ms until the task ends; with task "notify" it never polls and
// waits for notifications/tasks/status instead; then it fetches
// tasks/result. Its entry's result is {states, result}: the distinct
// states it saw the task in, from its CreateTaskResult on, and the
// task's result. A step with clientTasks makes the client one that runs
// tasks: it declares tasks.requests for elicitation and sampling, and
// runs one the server asks for as a task, completed after 1.5 s: between
// server-everything's polls, a second apart, so that a replayed server's
// poll finds the live task as the recorded one did.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const WAIT_LIMIT = 5000;
const [mode, target] = process.argv.slice(2);
const plan = JSON.parse(process.env.PLAN || "[]");
const alt = process.env.ALT === "1";
const wantNotes = Number(process.env.NOTES || 0);

let transport;
if (mode === "stdio") {
  const [command, ...args] = JSON.parse(target);
  transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
} else if (mode === "sse") {
  transport = new SSEClientTransport(new URL(target));
} else {
  transport = new StreamableHTTPClientTransport(new URL(target));
}
const clientTasks = plan.some((s) => s.clientTasks);
const capabilities = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
if (clientTasks) capabilities.tasks = { list: {}, cancel: {}, requests: { elicitation: { create: {} }, sampling: { createMessage: {} } } };
const client = new Client(
  { name: process.env.CLIENT_NAME || "matrix-ts", version: "1.0.0" },
  { capabilities, ...(clientTasks ? { taskStore: new InMemoryTaskStore() } : {}) },
);

const progress = new Map(); // token → values, in arrival order
const notes = [];
let changed = () => {};
const bump = () => { const c = changed; changed = () => {}; c(); };
// until resolves once ok() holds, or after WAIT_LIMIT with false.
async function until(ok) {
  const deadline = Date.now() + WAIT_LIMIT;
  while (!ok()) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    let timer;
    await new Promise((resolve) => { changed = resolve; timer = setTimeout(resolve, left); });
    clearTimeout(timer);
  }
  return true;
}
const arrived = (token, value) => (progress.get(token) || []).some((p) => p && p.progress === value);
const cancels = new Map(); // token → { at, abort }

client.setNotificationHandler(ProgressNotificationSchema, (n) => {
  const { progressToken, progress: value, total, message } = n.params;
  const p = { progress: value };
  if (total !== undefined) p.total = total;
  if (message !== undefined) p.message = message;
  const list = progress.get(progressToken) || [];
  list.push(p);
  progress.set(progressToken, list);
  const c = cancels.get(progressToken);
  if (c && value === c.at) {
    cancels.delete(progressToken);
    list.push("cancel");
    c.abort();
  }
  bump();
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  notes.push({ method: "notifications/message", params: n.params });
  bump();
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  notes.push({ method: "notifications/tools/list_changed" });
  bump();
});
const taskStatus = new Map(); // taskId → statuses notified, in arrival order
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
  const list = taskStatus.get(n.params.taskId) || [];
  list.push(n.params.status);
  taskStatus.set(n.params.taskId, list);
  bump();
});
// asTask answers a request the server asked to be run as a task with the
// task, completed with answer 1.5 s later; others with answer.
const asTask = (answer) => async (req, extra) => {
  if (!req.params.task || !extra.taskStore) return answer;
  const task = await extra.taskStore.createTask({ ttl: req.params.task.ttl, pollInterval: 500 });
  setTimeout(() => { extra.taskStore.storeTaskResult(task.taskId, "completed", answer).catch(() => {}); }, 1500);
  return { task };
};
client.setRequestHandler(CreateMessageRequestSchema, (req, extra) => {
  let prompt = "";
  for (const m of req.params.messages) if (m.role === "user" && m.content.type === "text") prompt = m.content.text;
  return asTask({ role: "assistant", model: "matrix-model", content: { type: "text", text: (alt ? "otherwise: " : "sampled: ") + prompt }, stopReason: "endTurn" })(req, extra);
});
client.setRequestHandler(ElicitRequestSchema, (req, extra) => asTask({ action: "accept", content: { name: alt ? "someone-else" : "matrix-user" } })(req, extra));
client.setRequestHandler(ListRootsRequestSchema, () => ({
  roots: alt
    ? [{ uri: "file:///matrix/gamma", name: "gamma" }]
    : [{ uri: "file:///matrix/alpha", name: "alpha" }, { uri: "file:///matrix/beta", name: "beta" }],
}));

const out = { steps: [] };
const opts = { timeout: 20000 };
const terminal = (s) => s === "completed" || s === "failed" || s === "cancelled";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// runTask runs step s as a task (see the top of this file).
async function runTask(s) {
  const created = await client.request({
    method: "tools/call", params: { name: s.tool, arguments: s.args || {}, task: { ttl: 300000 } },
  }, CreateTaskResultSchema, opts);
  const id = created.task.taskId;
  const states = [created.task.status];
  const saw = (st) => { if (states[states.length - 1] !== st) states.push(st); };
  if (s.task === "notify") {
    const notified = () => taskStatus.get(id) || [];
    const deadline = Date.now() + 20000;
    while (!notified().some(terminal) && Date.now() < deadline) {
      let timer;
      await new Promise((resolve) => { changed = resolve; timer = setTimeout(resolve, deadline - Date.now()); });
      clearTimeout(timer);
    }
    notified().forEach(saw);
  } else {
    while (!terminal(states[states.length - 1])) {
      await sleep(s.every || 500);
      saw((await client.experimental.tasks.getTask(id, opts)).status);
    }
  }
  const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema, opts);
  return { states, result };
}
const errorText = (e) => (e && e.code !== undefined ? e.code + " " + e.message : String(e && e.message));
try {
  await client.connect(transport, opts);
  for (const [i, s] of plan.entries()) {
    const token = "p-" + i;
    const e = { step: s.op === "list" ? "tools/list" : "tools/call " + s.tool };
    try {
      if (s.op === "list") {
        e.result = await client.listTools(undefined, opts);
      } else {
        const params = { name: s.tool, arguments: s.args || {} };
        if (s.progress) params._meta = { progressToken: token };
        const ac = new AbortController();
        if (s.cancelAt) cancels.set(token, { at: s.cancelAt, abort: () => ac.abort("matrix: cancel at progress " + s.cancelAt) });
        try {
          e.result = s.task ? await runTask(s) : await client.callTool(params, undefined, { ...opts, signal: ac.signal });
        } catch (err) {
          if (!ac.signal.aborted) throw err;
          e.error = "cancelled";
        }
        if (s.waitFor && !(await until(() => arrived(token, s.waitFor)))) e.wait = "progress " + s.waitFor + " never came";
        if (s.progress) e.progress = progress.get(token) || [];
      }
    } catch (err) {
      e.error = errorText(err);
      if (s.progress) e.progress = progress.get(token) || [];
    }
    out.steps.push(e);
  }
  if (wantNotes) await until(() => notes.length >= wantNotes);
} catch (err) {
  out.steps.push({ step: "connect", error: errorText(err) });
}
if (notes.length) out.notes = notes;
const server = transport._process;
try {
  await client.close();
} catch (err) {
  out.close = errorText(err);
}
if (server) out.serverExit = server.exitCode;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
