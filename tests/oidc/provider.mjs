// A real OpenID provider (npm's oidc-provider, a certified implementation) on a loopback port, for
// the tests of `gateway serve` as an OAuth resource server (tests/oidc_provider.py installs it).
//
// It issues JWT access tokens (RFC 9068) for whatever resource a client names (RFC 8707), signs them
// with keys made at start, registers clients dynamically (RFC 7591), and signs a user in without a
// page: the interaction completes itself as OIDC_ACCOUNT, with consent to what was asked. A client
// `robot` (secret `robot-secret`) gets tokens with client credentials. Prints "oidc-provider ready
// ISSUER" once it listens.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer } from "node:http";

import Provider from "oidc-provider";

const account = process.env.OIDC_ACCOUNT || "alice";
const roles = JSON.parse(process.env.OIDC_ROLES || '["admin"]');
const scope = process.env.OIDC_SCOPE || "mcp:tools";

const server = createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" });

const provider = new Provider(issuer, {
  jwks: {
    keys: [
      { ...rsa, kid: "rsa-1", alg: "RS256", use: "sig" },
      { ...ec, kid: "ec-1", alg: "ES256", use: "sig" },
    ],
  },
  // The resource's scope is listed too: dynamic registration accepts only scopes the provider names.
  scopes: ["openid", "offline_access", scope],
  cookies: { keys: [randomBytes(32).toString("hex")] },
  clients: [
    {
      client_id: "robot",
      client_secret: "robot-secret",
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
    },
  ],
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope,
        audience: resourceIndicator,
        accessTokenTTL: 300,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: process.env.OIDC_ALG || "RS256" } },
      }),
    },
  },
  extraTokenClaims: async () => ({ roles }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
});

// The sign-in and consent pages, answered at once: the tests play the user's browser.
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith("/interaction/")) {
    return next();
  }
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  let result;
  if (details.prompt.name === "login") {
    result = { login: { accountId: account } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    const missing = details.prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true }));
});

server.on("request", provider.callback());
process.on("SIGTERM", () => server.close(() => process.exit(0)));
console.log(`oidc-provider ready ${issuer}`);
