// An OAuth error as the RFCs spell it: a registered code (RFC 6749 §5.2, RFC 7591 §3.2.2,
// RFC 8707 §2, RFC 7009 §2.2.1) and a description that names the bad field. The surface
// answers it as `{ error, error_description }` with its status; nothing else of the API's
// error body, because OAuth clients parse exactly this shape.

export class OAuthError extends Error {
  constructor(
    readonly code: string,
    description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  get body(): { error: string; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

/** A form or query field as one string, or '' (a repeated field is refused: RFC 6749 §3.1). */
export function oneField(input: Record<string, unknown> | undefined, name: string): string {
  const value = input?.[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name}: must be given once`);
  return value;
}
