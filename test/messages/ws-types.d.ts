// The slice of the `ws` package (a dependency of @fastify/websocket, which ships no types
// of its own) that the /ws tests use as a client.
declare module 'ws' {
  export default class WebSocket {
    constructor(url: string, options?: { headers?: Record<string, string> });
    on(event: 'open', listener: () => void): this;
    on(event: 'close', listener: (code: number) => void): this;
    on(event: 'message', listener: (data: unknown) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'unexpected-response', listener: (req: unknown, res: { statusCode?: number }) => void): this;
    send(data: string): void;
    close(): void;
  }
}
