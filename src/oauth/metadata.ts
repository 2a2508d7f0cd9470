// The discovery documents of the authorization server for /mcp, built from the configured
// public URL and shaped by the MCP SDK's own schemas (docs/design/oauth.md, "Discovery"):
// the protected-resource metadata (RFC 9728), the authorization-server metadata (RFC 8414)
// and the bearer challenge a refused /mcp request carries.

import {
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  type OAuthMetadata,
  type OAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** The one scope: an endpoint's grant is the scope, and OAuth never widens it. */
export const SCOPE = 'mcp';

/** The resource indicator (RFC 8707) of this server's /mcp: what every token is for. */
export function resourceUrl(publicUrl: string): string {
  return `${publicUrl}/mcp`;
}

/** Where the protected-resource metadata of /mcp is served (RFC 9728 §3.1, path-suffixed). */
export function resourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource/mcp`;
}

/** The WWW-Authenticate of a refused /mcp request: the realm, and where OAuth starts (RFC 9728 §5.1). */
export function bearerChallenge(publicUrl: string): string {
  return `Bearer realm="switchboard", resource_metadata="${resourceMetadataUrl(publicUrl)}"`;
}

export function protectedResourceMetadata(publicUrl: string): OAuthProtectedResourceMetadata {
  return OAuthProtectedResourceMetadataSchema.parse({
    resource: resourceUrl(publicUrl),
    authorization_servers: [publicUrl],
    scopes_supported: [SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Switchboard',
    resource_documentation: `${publicUrl}/docs`,
  });
}

export function authorizationServerMetadata(publicUrl: string): OAuthMetadata {
  return OAuthMetadataSchema.parse({
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/oauth/authorize`,
    token_endpoint: `${publicUrl}/oauth/token`,
    registration_endpoint: `${publicUrl}/oauth/register`,
    revocation_endpoint: `${publicUrl}/oauth/revoke`,
    scopes_supported: [SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    // An extension (RFC 8414 §2 allows more members): where `switchboard login --web` sends
    // the browser; the CLI reads it to decide whether the browser sign-in is on offer
    // (docs/design/cli-login.md).
    switchboard_cli_login_endpoint: `${publicUrl}/cli/login`,
  });
}
