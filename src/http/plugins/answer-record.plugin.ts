import fp from 'fastify-plugin';
import type { AnswerRecorder } from '../answers/answer-recorder.js';
import { routeInfo } from '../route-info.js';

/**
 * Tells the listener's AnswerRecorder (answers/answer-recorder.ts) of every Fastify answer, and
 * at debug of every arrival: the same record the fast path makes of its answers.
 */
export const answerRecordPlugin = fp<{ recorder: AnswerRecorder }>(
  async (app, { recorder }) => {
    if (recorder.logsArrivals) {
      app.addHook('onRequest', function logArrival(request, _reply, done) {
        recorder.arrived(request.raw, request.id, request.ip);
        done();
      });
    }
    app.addHook('onResponse', function recordAnswer(request, reply, done) {
      const { operation, template, deprecated } = routeInfo(request);
      recorder.answered(request.raw, {
        requestId: request.id,
        method: request.method,
        operation,
        route: template,
        url: request.url,
        status: reply.statusCode,
        seconds: reply.elapsedTime / 1000,
        key: request.apiKey,
        deprecated,
      });
      done();
    });
  },
  { name: 'answer-record' },
);
