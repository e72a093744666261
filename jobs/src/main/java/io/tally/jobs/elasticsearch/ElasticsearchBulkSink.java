package io.tally.jobs.elasticsearch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.BiConsumer;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.http.entity.ByteArrayEntity;
import org.apache.http.entity.ContentType;
import org.elasticsearch.client.Request;
import org.elasticsearch.client.Response;
import org.elasticsearch.client.ResponseException;
import org.elasticsearch.client.ResponseListener;
import org.elasticsearch.client.RestClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Indexes documents with Elasticsearch's `_bulk` API on its low-level REST client: each document
 * written once into the request ({@link BulkBody}), the answer read only as far as it must be
 * ({@link BulkOutcome}). A bulk goes when it reaches its size or its count, or when its oldest
 * document waited the interval; before a checkpoint completes every bulk is acknowledged, so with
 * the Kafka offsets in the checkpoint and the document id one-to-one with the event a restart
 * indexes at least once and stores each document once. Elasticsearch busy (a 429, a 503, the node
 * unreachable) is retried after {@link #RETRY_DELAYS_MS}, the request whole or only its refused
 * actions; a document refused for good, or a failure that outlasts the retries, fails the job, as
 * the Flink connector this replaces did.
 */
public final class ElasticsearchBulkSink implements Sink<IndexDoc> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ElasticsearchBulkSink.class);

    /** Waits before each retry: about 2 minutes in all, the connector's 8 exponential retries from 500 ms. */
    static final long[] RETRY_DELAYS_MS = {500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000};

    private final ElasticsearchEndpoint endpoint;
    private final Limits limits;

    /** When a bulk goes: at this many bytes or documents, or once its first document waited intervalMs. */
    public record Limits(long maxBytes, int maxActions, long intervalMs) implements java.io.Serializable {}

    public ElasticsearchBulkSink(ElasticsearchEndpoint endpoint, Limits limits) {
        this.endpoint = endpoint;
        this.limits = limits;
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<IndexDoc> createWriter(InitContext context) {
        return new Writer(
                new RestTransport(endpoint.restClient()),
                limits,
                context.getMailboxExecutor(),
                context.getProcessingTimeService());
    }

    /** How a bulk reaches Elasticsearch: the answer (status, body) or the failure, on any thread. */
    interface Transport extends AutoCloseable {
        void send(BulkBody body, BiConsumer<Answer, Exception> done);

        @Override
        void close() throws IOException;
    }

    /** An HTTP answer: its status and body. */
    record Answer(int status, byte[] body, int length) {}

    static final class Writer implements SinkWriter<IndexDoc> {
        private final Transport transport;
        private final Limits limits;
        private final MailboxExecutor mailbox;
        private final ProcessingTimeService time;
        private final long[] retryDelaysMs;
        private BulkBody pending = new BulkBody();
        /** Bulks sent and not yet acknowledged, their retries included. */
        private int inFlight;

        private boolean timerArmed;

        Writer(Transport transport, Limits limits, MailboxExecutor mailbox, ProcessingTimeService time) {
            this(transport, limits, mailbox, time, RETRY_DELAYS_MS);
        }

        Writer(
                Transport transport,
                Limits limits,
                MailboxExecutor mailbox,
                ProcessingTimeService time,
                long[] retryDelaysMs) {
            this.transport = transport;
            this.limits = limits;
            this.mailbox = mailbox;
            this.time = time;
            this.retryDelaysMs = retryDelaysMs;
        }

        @Override
        public void write(IndexDoc doc, Context context) throws InterruptedException {
            pending.index(doc.index, doc.id, doc.source);
            if (pending.bytes() >= limits.maxBytes() || pending.actions() >= limits.maxActions()) {
                sendPending();
            } else if (!timerArmed) {
                timerArmed = true;
                time.registerTimer(time.getCurrentProcessingTime() + limits.intervalMs(), t -> {
                    timerArmed = false;
                    sendPending();
                });
            }
        }

        /** Sends what waits; one bulk in flight at a time (the next waits for it: backpressure). */
        private void sendPending() throws InterruptedException {
            while (inFlight > 0 && !pending.isEmpty()) {
                mailbox.yield(); // may run a timer that sends what waits itself
            }
            if (pending.isEmpty()) {
                return;
            }
            BulkBody body = pending;
            pending = new BulkBody();
            inFlight++;
            send(body, 0);
        }

        private void send(BulkBody body, int attempt) {
            transport.send(
                    body,
                    (answer, error) ->
                            mailbox.execute(() -> answered(body, attempt, answer, error), "elasticsearch bulk answer"));
        }

        /** Runs in the mailbox: the bulk is done, goes again (whole or in part) later, or fails the job. */
        private void answered(BulkBody body, int attempt, Answer answer, Exception error) throws IOException {
            BulkBody again;
            String why;
            if (error != null) {
                again = body;
                why = error.toString();
            } else if (answer.status() / 100 != 2) {
                if (!BulkOutcome.retryable(answer.status()) && answer.status() / 100 != 5) {
                    throw new FlinkRuntimeException("Elasticsearch refused a bulk of " + body.actions()
                            + " documents: HTTP " + answer.status() + " "
                            + new String(answer.body(), 0, Math.min(answer.length(), 2000), StandardCharsets.UTF_8));
                }
                again = body;
                why = "HTTP " + answer.status();
            } else {
                BulkOutcome outcome = BulkOutcome.parse(answer.body(), answer.length());
                if (!outcome.refused().isEmpty()) {
                    throw new FlinkRuntimeException("Elasticsearch refused "
                            + outcome.refused().size() + " documents of a bulk of " + body.actions() + ", the first: "
                            + outcome.refused().get(0));
                }
                if (outcome.retry().isEmpty()) {
                    inFlight--;
                    return;
                }
                again = body.only(outcome.retry());
                why = outcome.retry().size() + " documents refused for now (429/503)";
            }
            if (attempt >= retryDelaysMs.length) {
                throw new FlinkRuntimeException("Elasticsearch did not take a bulk of " + again.actions()
                        + " documents after " + attempt + " retries: " + why);
            }
            LOG.warn("bulk of {} documents retried in {} ms: {}", again.actions(), retryDelaysMs[attempt], why);
            time.registerTimer(time.getCurrentProcessingTime() + retryDelaysMs[attempt], t -> send(again, attempt + 1));
        }

        /** Before a checkpoint: every document written so far acknowledged. */
        @Override
        public void flush(boolean endOfInput) throws InterruptedException {
            sendPending();
            while (inFlight > 0) {
                mailbox.yield();
            }
        }

        @Override
        public void close() throws IOException {
            transport.close();
        }
    }

    /** The low-level REST client's asynchronous POST /_bulk. */
    static final class RestTransport implements Transport {
        private static final ContentType NDJSON = ContentType.create("application/x-ndjson");
        private final RestClient client;

        RestTransport(RestClient client) {
            this.client = client;
        }

        @Override
        public void send(BulkBody body, BiConsumer<Answer, Exception> done) {
            Request request = new Request("POST", "/_bulk");
            request.addParameter("filter_path", BulkOutcome.FILTER_PATH);
            request.setEntity(new ByteArrayEntity(body.array(), 0, body.bytes(), NDJSON));
            client.performRequestAsync(request, new ResponseListener() {
                @Override
                public void onSuccess(Response response) {
                    try {
                        done.accept(answerOf(response), null);
                    } catch (IOException e) {
                        done.accept(null, e);
                    }
                }

                @Override
                public void onFailure(Exception e) {
                    if (e instanceof ResponseException r) { // a status other than 2xx: judged like any answer
                        try {
                            done.accept(answerOf(r.getResponse()), null);
                            return;
                        } catch (IOException ignored) {
                            // its body could not be read: a failure like any other
                        }
                    }
                    done.accept(null, e);
                }
            });
        }

        private static Answer answerOf(Response response) throws IOException {
            byte[] bytes;
            if (response.getEntity() == null) {
                bytes = new byte[0];
            } else {
                try (InputStream in = response.getEntity().getContent()) {
                    bytes = in.readAllBytes();
                }
            }
            return new Answer(response.getStatusLine().getStatusCode(), bytes, bytes.length);
        }

        @Override
        public void close() throws IOException {
            client.close();
        }
    }
}
