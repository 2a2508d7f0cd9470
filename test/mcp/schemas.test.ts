// Pins one schema per verb: the input schema tools/list shows is the very object the use
// case behind the verb parses its arguments with, not a second description of them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ackDoorbellInput } from '../../src/doorbell/ack.js';
import { getDoorbellTestInput, startDoorbellTestInput } from '../../src/doorbell/self-test.js';
import { ackInput, sendInput } from '../../src/domain/messages.js';
import { allVerbs } from '../../src/domain/verbs.js';
import { handoffCreateInput } from '../../src/grants/handoff.js';
import { createHookInput, hookIdInput, listHooksInput, rotateHookInput } from '../../src/hooks/manage.js';
import { toolsFor, verbFor } from '../../src/mcp/verbs/index.js';
import { clockInInput, clockOutInput } from '../../src/presence/manage.js';
import * as todos from '../../src/todos/index.js';

test('each verb shows the schema its use case parses with', () => {
  const parsedWith: Record<string, unknown> = {
    list_todos: todos.listTodosInput,
    get_todo: todos.getTodoInput,
    claim: todos.claimInput,
    claim_next: todos.claimNextInput,
    heartbeat: todos.heartbeatInput,
    complete: todos.completeInput,
    fail: todos.failInput,
    release: todos.releaseInput,
    create_todo: handoffCreateInput,
    send_message: sendInput,
    ack_message: ackInput,
    ack_doorbell: ackDoorbellInput,
    test_doorbell: startDoorbellTestInput,
    get_doorbell_test: getDoorbellTestInput,
    create_notify_hook: createHookInput,
    list_notify_hooks: listHooksInput,
    rotate_notify_hook: rotateHookInput,
    delete_notify_hook: hookIdInput,
    clock_in: clockInInput,
    clock_out: clockOutInput,
  };
  for (const [name, schema] of Object.entries(parsedWith)) {
    assert.equal(verbFor(allVerbs(), name).input, schema, name);
  }
});

test('every argument a verb takes is described to the agent', () => {
  for (const tool of toolsFor(allVerbs())) {
    const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
    for (const [field, schema] of Object.entries(properties)) {
      assert.ok(schema.description && schema.description.length > 5, `${tool.name}.${field}`);
    }
  }
});
