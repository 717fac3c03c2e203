// The official MCP TypeScript SDK (@modelcontextprotocol/client, pinned in package.json) as a real
// client of the operator endpoint, driven by tests/e2e/test_typescript_sdk.py.
//
//   node operator_client.mjs <endpoint URL> '<JSON: tool name -> arguments>'
//
// It runs the SDK's own OAuth client flow: the 401 challenge, discovery, dynamic client
// registration, PKCE, then a loopback listener for the redirect (RFC 8252 §7.3). The browser step
// belongs to the test: this script prints {"event": "authorize", "url": ...} and waits for the
// browser to come back to its listener. It then connects with versionNegotiation pinned to
// 2026-07-28 (the SDK's default, "legacy", would send initialize), calls every tool given, reads
// the server card, lists resource templates, and prints {"event": "result", ...}. Each line of
// stdout is one JSON object; failures go to stderr with exit status 1.

import http from "node:http";

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const REVISION = "2026-07-28";
const SIGN_IN_TIMEOUT_MS = 120_000;

const [endpoint, toolArguments] = process.argv.slice(2);
if (!endpoint || !toolArguments) {
  console.error("usage: node operator_client.mjs <endpoint URL> '<JSON: tool name -> arguments>'");
  process.exit(2);
}
const calls = JSON.parse(toolArguments);

function emit(event, fields) {
  process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
}

/** A one-shot loopback listener; resolves with the redirect's query (code, state, iss). */
async function listenForRedirect() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const redirectUrl = `http://127.0.0.1:${server.address().port}/callback`;
  const received = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no redirect came back")), SIGN_IN_TIMEOUT_MS);
    server.on("request", (request, response) => {
      const query = new URL(request.url, redirectUrl).searchParams;
      response.writeHead(query.has("code") || query.has("error") ? 200 : 404).end();
      if (query.has("code") || query.has("error")) {
        clearTimeout(timer);
        resolve(query);
      }
    });
  });
  return { redirectUrl, received, close: () => server.close() };
}

/** The SDK's OAuthClientProvider, kept in memory: what a real client would store on disk. */
function memoryProvider(redirectUrl) {
  const stored = {};
  return {
    stored,
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return {
        client_name: "TypeScript SDK end-to-end test",
        redirect_uris: [redirectUrl],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    state: () => "typescript-e2e-state",
    clientInformation: () => stored.client,
    saveClientInformation: (client) => {
      stored.client = client;
    },
    tokens: () => stored.tokens,
    saveTokens: (tokens) => {
      stored.tokens = tokens;
    },
    redirectToAuthorization: (url) => emit("authorize", { url: url.href }),
    saveCodeVerifier: (verifier) => {
      stored.verifier = verifier;
    },
    codeVerifier: () => stored.verifier,
    saveDiscoveryState: (state) => {
      stored.discovery = state;
    },
    discoveryState: () => stored.discovery,
  };
}

function newClient() {
  return new Client(
    { name: "service-operator-typescript-e2e", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: REVISION } } },
  );
}

async function connect(url, provider, listener) {
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  let client = newClient();
  try {
    await client.connect(transport);
    return client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) {
      throw error;
    }
  }
  const query = await listener.received;
  if (query.get("state") !== "typescript-e2e-state") {
    throw new Error(`the redirect carried another state: ${query.get("state")}`);
  }
  await transport.finishAuth(query);
  transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  client = newClient();
  await client.connect(transport);
  return client;
}

async function main() {
  const listener = await listenForRedirect();
  const provider = memoryProvider(listener.redirectUrl);
  try {
    const client = await connect(new URL(endpoint), provider, listener);
    const tools = await client.listTools();
    const results = {};
    for (const [name, args] of Object.entries(calls)) {
      const result = await client.callTool({ name, arguments: args });
      results[name] = { isError: result.isError ?? false, structuredContent: result.structuredContent };
    }
    const card = await client.readResource({ uri: "mcp://server-card.json" });
    const templates = await client.listResourceTemplates();
    emit("result", {
      protocolVersion: client.getNegotiatedProtocolVersion(),
      serverInfo: client.getServerVersion(),
      tools: tools.tools.map((tool) => tool.name),
      calls: results,
      serverCard: JSON.parse(card.contents[0].text),
      resourceTemplates: templates.resourceTemplates,
      registeredClientId: provider.stored.client?.client_id ?? null,
      scope: provider.stored.tokens?.scope ?? null,
    });
    await client.close();
  } finally {
    listener.close();
  }
}

main().catch((error) => {
  console.error(error?.stack ?? String(error));
  process.exit(1);
});
