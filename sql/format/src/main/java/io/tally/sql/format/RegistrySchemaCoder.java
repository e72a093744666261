package io.tally.sql.format;

import io.tally.serde.RestSchemaRegistryClient;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.WireFormat;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import org.apache.avro.Schema;
import org.apache.flink.formats.avro.SchemaCoder;

/**
 * flink-avro's hook for the header of the Confluent wire format (byte 0, the schema's id as a
 * big-endian int), answered by Tally's registry: a writer schema by id (the client caches each id
 * once), and on writes the id of the subject's schema.
 */
final class RegistrySchemaCoder implements SchemaCoder {
    private final SchemaRegistryClient registry;
    private final String subject;

    RegistrySchemaCoder(SchemaRegistryClient registry, String subject) {
        this.registry = registry;
        this.subject = subject;
    }

    @Override
    public Schema readSchema(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        int magic = data.read();
        if (magic != WireFormat.MAGIC) {
            throw new IOException("not in the Confluent wire format: first byte is " + magic + ", not 0");
        }
        int id = data.readInt();
        try {
            return registry.schemaById(id);
        } catch (RuntimeException e) {
            throw new IOException("writer schema " + id + " is not readable from the registry: " + e.getMessage(), e);
        }
    }

    @Override
    public void writeSchema(Schema schema, OutputStream out) throws IOException {
        if (subject == null) {
            throw new IOException("tally-avro needs a 'subject' to write");
        }
        out.write(WireFormat.MAGIC);
        new DataOutputStream(out).writeInt(registry.lookup(subject, schema));
    }

    /** Makes one coder (one registry client and its cache) per (de)serializer instance. */
    record Provider(String url, String subject, String token) implements SchemaCoderProvider {
        @Override
        public SchemaCoder get() {
            return new RegistrySchemaCoder(new RestSchemaRegistryClient(url, Duration.ofSeconds(10), token), subject);
        }
    }
}
