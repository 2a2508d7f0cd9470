// The presence gate as SQL, shared by the doorbell's ring statements (store/rings.ts):
// only an endpoint whose last decided presence is `in` is rung, so a clocked-out endpoint
// gets no doorbell, no re-ring and no attach ring, and keeps its ring budget.

/** SQL over alias s (mcp_sessions): the session's endpoint is present. */
export const ENDPOINT_PRESENT = `EXISTS (SELECT 1 FROM endpoints pe WHERE pe.id = s.endpoint_id AND pe.presence_seen = 'in')`;
