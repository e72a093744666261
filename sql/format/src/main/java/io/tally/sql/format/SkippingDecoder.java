package io.tally.sql.format;

import java.io.IOException;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.table.data.RowData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A decoder that skips a record it cannot decode (the Kafka connector drops a null row) and logs
 * it, for {@code ignore-parse-errors}: a topic that Tally's jobs read holds records they
 * dead-lettered, and one of them must not stop every query over it.
 */
final class SkippingDecoder implements DeserializationSchema<RowData> {
    private static final Logger LOG = LoggerFactory.getLogger(SkippingDecoder.class);

    private final DeserializationSchema<RowData> decoder;
    private transient long skipped;

    SkippingDecoder(DeserializationSchema<RowData> decoder) {
        this.decoder = decoder;
    }

    @Override
    public void open(InitializationContext context) throws Exception {
        decoder.open(context);
    }

    @Override
    public RowData deserialize(byte[] message) {
        try {
            return decoder.deserialize(message);
        } catch (IOException | RuntimeException e) {
            skipped++;
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            LOG.warn("tally-avro skipped an undecodable record ({} so far): {}", skipped, root.getMessage());
            return null;
        }
    }

    @Override
    public boolean isEndOfStream(RowData next) {
        return false;
    }

    @Override
    public TypeInformation<RowData> getProducedType() {
        return decoder.getProducedType();
    }
}
