// openid-client as a partner's Node program uses it: RFC 8414 discovery of a root (the issuer), the
// client-credentials grant, and the error paths. Each scenario's outcome is printed as one JSON line for
// tests/partners/test_openid_client.py, which starts the server and checks them; a token is never made of an error.
//
// Usage: node check.mjs '{"issuer", "clientId", "clientSecret", "resource", "expiredToken", "failuresToThrottle"}'
import * as client from "openid-client";

const given = JSON.parse(process.argv[2]);
const insecure = { execute: [client.allowInsecureRequests] }; // the test's live server speaks HTTP on loopback

async function discover(secret, authentication) {
  return client.discovery(new URL(given.issuer), given.clientId, secret, authentication(secret), {
    ...insecure,
    algorithm: "oauth2", // RFC 8414: /.well-known/oauth-authorization-server/<root>
  });
}

function failure(error) {
  const challenge = error.cause?.[0];
  return {
    outcome: "error",
    name: error.name,
    code: error.code,
    status: error.status ?? error.response?.status,
    error: error.error ?? challenge?.parameters?.error,
    description: error.error_description ?? challenge?.parameters?.error_description,
    scheme: challenge?.scheme,
  };
}

async function run(name, attempt) {
  let result;
  try {
    result = { outcome: "token", ...(await attempt()) };
  } catch (error) {
    result = failure(error);
  }
  console.log(JSON.stringify({ scenario: name, ...result }));
}

const methods = { post: client.ClientSecretPost, basic: client.ClientSecretBasic };

for (const [method, authentication] of Object.entries(methods)) {
  await run(`success-${method}`, async () => {
    const config = await discover(given.clientSecret, authentication);
    const token = await client.clientCredentialsGrant(config);
    const answer = await client.fetchProtectedResource(
      config,
      token.access_token,
      new URL(given.resource),
      "GET",
      undefined,
      new Headers({ ClientID: given.clientId }),
    );
    return {
      tokenType: token.token_type,
      expiresIn: token.expires_in,
      issuer: config.serverMetadata().issuer,
      tokenEndpoint: config.serverMetadata().token_endpoint,
      resourceStatus: answer.status,
    };
  });
  await run(`wrong-secret-${method}`, async () => {
    const config = await discover(`${given.clientSecret}x`, authentication);
    return client.clientCredentialsGrant(config);
  });
}

await run("wrong-grant", async () => {
  const config = await discover(given.clientSecret, client.ClientSecretPost);
  return client.genericGrantRequest(config, "password", { username: "dev", password: "x" });
});

await run("expired-token", async () => {
  const config = await discover(given.clientSecret, client.ClientSecretPost);
  const answer = await client.fetchProtectedResource(
    config,
    given.expiredToken,
    new URL(given.resource),
    "GET",
    undefined,
    new Headers({ ClientID: given.clientId }),
  );
  return { resourceStatus: answer.status };
});

const wrong = await discover(`${given.clientSecret}x`, client.ClientSecretPost);
for (let i = 0; i < given.failuresToThrottle; i += 1) {
  await client.clientCredentialsGrant(wrong).catch(() => null);
}
await run("throttled", async () => {
  const config = await discover(given.clientSecret, client.ClientSecretPost);
  return client.clientCredentialsGrant(config);
});
