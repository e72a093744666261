package io.tally.jobs.elasticsearch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.jobs.elasticsearch.ElasticsearchBulkSink.Answer;
import io.tally.jobs.elasticsearch.ElasticsearchBulkSink.Limits;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.function.ThrowingRunnable;
import org.junit.jupiter.api.Test;

/** The writer's batching, retries and checkpoint flush, against a scripted Elasticsearch. */
class ElasticsearchBulkSinkTest {
    private static final long[] RETRIES = {100, 200};

    /** The task's mailbox and clock: mails run on yield; with none queued, time jumps to the next timer. */
    static final class Task implements MailboxExecutor, ProcessingTimeService {
        long now;
        final Deque<ThrowingRunnable<? extends Exception>> mails = new ArrayDeque<>();
        final List<Object[]> timers = new ArrayList<>();

        @Override
        public void execute(MailOptions o, ThrowingRunnable<? extends Exception> c, String d, Object... args) {
            mails.add(c);
        }

        @Override
        public void yield() {
            if (mails.isEmpty()) {
                if (timers.isEmpty()) {
                    throw new IllegalStateException("the writer waits for something that never comes");
                }
                timers.sort(Comparator.comparingLong(t -> (Long) t[0]));
                Object[] t = timers.remove(0);
                now = Math.max(now, (Long) t[0]);
                mails.add(() -> ((ProcessingTimeCallback) t[1]).onProcessingTime(now));
            }
            try {
                mails.poll().run();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new FlinkRuntimeException(e);
            }
        }

        @Override
        public boolean tryYield() {
            return false;
        }

        @Override
        public boolean shouldInterrupt() {
            return false;
        }

        @Override
        public long getCurrentProcessingTime() {
            return now;
        }

        @Override
        public ScheduledFuture<?> registerTimer(long at, ProcessingTimeCallback callback) {
            timers.add(new Object[] {at, callback});
            return null;
        }
    }

    /** Answers each bulk at once with what the script says for it; records the bodies. */
    static final class ScriptedElasticsearch implements ElasticsearchBulkSink.Transport {
        final List<String> bodies = new ArrayList<>();
        final Function<String, Object> script;

        ScriptedElasticsearch(Function<String, Object> script) {
            this.script = script;
        }

        @Override
        public void send(BulkBody body, BiConsumer<Answer, Exception> done) {
            String text = new String(body.array(), 0, body.bytes(), StandardCharsets.UTF_8);
            bodies.add(text);
            Object a = script.apply(text);
            if (a instanceof Exception e) {
                done.accept(null, e);
            } else {
                byte[] b = ((String) a).getBytes(StandardCharsets.UTF_8);
                int status = b.length > 0 && b[0] == '{' ? 200 : Integer.parseInt(((String) a).substring(0, 3));
                done.accept(new Answer(status, b, b.length), null);
            }
        }

        @Override
        public void close() {}
    }

    private static final String OK = "{\"errors\":false}";

    private static IndexDoc doc(int n) {
        IndexDoc d = new IndexDoc();
        d.index = "tally-a-20261201";
        d.id = "id-" + n;
        d.source.put("n", n);
        return d;
    }

    private static ElasticsearchBulkSink.Writer writer(Task task, ScriptedElasticsearch es, int maxActions) {
        return new ElasticsearchBulkSink.Writer(es, new Limits(1 << 20, maxActions, 1000), task, task, RETRIES);
    }

    @Test
    void documentsWaitForTheIntervalThenGoAsOneBulk() throws Exception {
        Task task = new Task();
        ScriptedElasticsearch es = new ScriptedElasticsearch(body -> OK);
        ElasticsearchBulkSink.Writer w = writer(task, es, 100);

        w.write(doc(1), null);
        w.write(doc(2), null);
        assertThat(es.bodies).isEmpty();
        assertThat(task.timers).hasSize(1); // one timer for the bulk, not one per document

        task.yield(); // the interval passes
        task.yield(); // the answer

        assertThat(task.now).isEqualTo(1000);
        assertThat(es.bodies)
                .singleElement()
                .satisfies(b -> assertThat(b).contains("id-1").contains("id-2"));
        w.flush(false);
        assertThat(es.bodies).hasSize(1);
    }

    @Test
    void aFullBulkGoesAtOnceAndAFlushSendsTheRestAndWaitsForIt() throws Exception {
        Task task = new Task();
        ScriptedElasticsearch es = new ScriptedElasticsearch(body -> OK);
        ElasticsearchBulkSink.Writer w = writer(task, es, 2);

        w.write(doc(1), null);
        w.write(doc(2), null);
        assertThat(es.bodies).hasSize(1);
        w.write(doc(3), null); // waits for the first bulk's answer before it may go

        w.flush(false);

        assertThat(es.bodies).hasSize(2);
        assertThat(es.bodies.get(1)).contains("id-3").doesNotContain("id-2");
        assertThat(task.mails).isEmpty();
    }

    @Test
    void documentsRefusedForNowGoAgainAloneAfterTheRetryDelay() throws Exception {
        Task task = new Task();
        ScriptedElasticsearch es = new ScriptedElasticsearch(body -> body.contains("id-1")
                ? "{\"errors\":true,\"items\":[{\"index\":{\"status\":201}},{\"index\":{\"status\":429,"
                        + "\"error\":{\"type\":\"es_rejected_execution_exception\",\"reason\":\"busy\"}}}]}"
                : OK);
        ElasticsearchBulkSink.Writer w = writer(task, es, 100);
        w.write(doc(1), null);
        w.write(doc(2), null);

        w.flush(false); // returns only once the retry was acknowledged

        assertThat(es.bodies).hasSize(2);
        assertThat(es.bodies.get(1))
                .isEqualTo("{\"index\":{\"_index\":\"tally-a-20261201\",\"_id\":\"id-2\"}}\n{\"n\":2}\n");
        assertThat(task.now).isEqualTo(100);
    }

    @Test
    void anUnreachableNodeIsRetriedThenFailsTheJob() throws Exception {
        Task task = new Task();
        ScriptedElasticsearch es = new ScriptedElasticsearch(body -> new ConnectException("Connection refused"));
        ElasticsearchBulkSink.Writer w = writer(task, es, 100);
        w.write(doc(1), null);

        assertThatThrownBy(() -> w.flush(false))
                .isInstanceOf(FlinkRuntimeException.class)
                .hasMessageContaining("after 2 retries")
                .hasMessageContaining("Connection refused");
        assertThat(es.bodies).hasSize(3);
        assertThat(task.now).isEqualTo(300);
    }

    @Test
    void aBusyNodeIsRetriedAndAnswersLater() throws Exception {
        Task task = new Task();
        int[] calls = {0};
        ScriptedElasticsearch es = new ScriptedElasticsearch(body -> calls[0]++ == 0 ? "503 unavailable" : OK);
        ElasticsearchBulkSink.Writer w = writer(task, es, 100);
        w.write(doc(1), null);

        w.flush(false);

        assertThat(es.bodies).hasSize(2).allSatisfy(b -> assertThat(b).contains("id-1"));
    }

    @Test
    void aDocumentRefusedForGoodOrARefusedRequestFailsTheJob() throws Exception {
        Task task = new Task();
        ElasticsearchBulkSink.Writer w = writer(
                task,
                new ScriptedElasticsearch(
                        body -> "{\"errors\":true,\"items\":["
                                + "{\"index\":{\"status\":400,\"error\":{\"type\":\"mapper_parsing_exception\",\"reason\":\"bad\"}}}]}"),
                100);
        w.write(doc(1), null);
        assertThatThrownBy(() -> w.flush(false)).hasMessageContaining("mapper_parsing_exception: bad");

        Task task2 = new Task();
        ElasticsearchBulkSink.Writer w2 = writer(task2, new ScriptedElasticsearch(body -> "401 unauthorized"), 100);
        w2.write(doc(1), null);
        assertThatThrownBy(() -> w2.flush(false)).hasMessageContaining("HTTP 401");
    }

    @Test
    void aFlushWithNothingWrittenReturnsAtOnce() throws IOException, InterruptedException {
        Task task = new Task();
        ScriptedElasticsearch es = new ScriptedElasticsearch(body -> OK);
        writer(task, es, 100).flush(true);
        assertThat(es.bodies).isEmpty();
    }
}
