// A headless OAuth client on the TypeScript SDK's OAuthClientProvider:
// it connects to an OAuth-protected MCP server, registers dynamically,
// fetches the authorization URL without following redirects (the
// authorization server approves at once) and reads the code from the
// Location, exchanges it, then lists the tools and calls echo. It prints
// what it saw, one line each, for the Go test to compare.
//
// usage: node client.mjs SERVER_URL CLIENT_NAME TEXT
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [serverUrl, clientName, text] = process.argv.slice(2);
const redirectUrl = 'http://127.0.0.1:9/oauth/callback';

class HeadlessProvider {
  constructor() {
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.code = undefined;
    this.discovery = undefined;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return {
      client_name: 'mcptest-ts',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    };
  }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  // With MCPTEST_TS_KEEP_DISCOVERY set, what discovery found is kept for
  // finishAuth, which otherwise discovers again without the
  // resource_metadata of the refusal.
  saveDiscoveryState(state) { if (process.env.MCPTEST_TS_KEEP_DISCOVERY) this.discovery = state; }
  discoveryState() { return this.discovery; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(url) {
    const state = url.searchParams.get('state');
    const resp = await fetch(url, { redirect: 'manual' });
    const loc = resp.headers.get('location');
    if (!loc) throw new Error(`the authorization URL answered ${resp.status} without a Location`);
    const back = new URL(loc);
    if (back.searchParams.get('error')) throw new Error(`authorization refused: ${back.searchParams.get('error')}`);
    if (state && back.searchParams.get('state') !== state) throw new Error('state mismatch');
    this.code = back.searchParams.get('code');
  }
}

const provider = new HeadlessProvider();
const client = new Client({ name: clientName, version: '1.0.0' });
const url = new URL(serverUrl);
try {
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
} catch (e) {
  if (!(e instanceof UnauthorizedError) || !provider.code) throw e;
  const t = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await t.finishAuth(provider.code);
  await client.connect(t);
}
const out = [];
out.push('negotiated ' + client.getServerVersion()?.name);
for (const tool of (await client.listTools()).tools) out.push('tool ' + tool.name);
const res = await client.callTool({ name: 'echo', arguments: { text } });
for (const c of res.content) if (c.type === 'text') out.push('echo ' + c.text);
console.log(out.join('\n'));
await client.close();
