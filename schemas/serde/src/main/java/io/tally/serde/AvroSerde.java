package io.tally.serde;

import io.tally.model.TallySchemas;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.avro.util.ClassSecurityValidator;

/**
 * Avro records in Confluent wire format, with schemas from a registry (TopicNameStrategy:
 * subject {@code <topic>-value}). Decoding resolves the writer's schema (from the id in the
 * payload) to the caller's reader schema, so records of old and new producers both decode.
 * Generated records (SpecificRecord, package tally.v1) are written and read with their classes'
 * conversions (timestamps as Instant) and registered under the schema as published, so a
 * generic and a specific producer of one type share one schema id.
 * Thread-safe; writers and readers are cached per schema.
 */
public final class AvroSerde {
    private final SchemaRegistryClient registry;
    private final boolean autoRegister;
    private final Map<Schema, DatumWriter<GenericRecord>> writers = new ConcurrentHashMap<>();
    /** Per generated record schema: its writer and the schema it is registered under. */
    private final Map<Schema, SpecificWriting> specificWriters = new ConcurrentHashMap<>();
    /** Per generated record class: its model (conversions), schema and reader key, looked up once. */
    private final Map<Class<?>, SpecificReading> specificReaders = new ConcurrentHashMap<>();

    private record SpecificWriting(DatumWriter<GenericRecord> writer, Schema registered) {}

    private record SpecificReading(SpecificData model, Schema schema, int readerKey) {}

    private final Map<Long, DatumReader<?>> readers = new ConcurrentHashMap<>();
    private final Map<Schema, Integer> readerIds = new ConcurrentHashMap<>();
    private final AtomicInteger nextReaderId = new AtomicInteger();
    /** Readers that decode with the writer's own schema, by schema id (the common case). */
    private final Map<Integer, GenericDatumReader<GenericRecord>> ownReaders = new ConcurrentHashMap<>();
    /** Subject per topic, so the hot path does not build a string per record. */
    private final Map<String, String> subjects = new ConcurrentHashMap<>();

    static {
        // Avro 1.12 loads only trusted classes by a schema's name; Tally's generated records are.
        ClassSecurityValidator.Builder trusted = ClassSecurityValidator.builder();
        TallySchemas.GENERATED.forEach(trusted::add);
        ClassSecurityValidator.setGlobal(
                ClassSecurityValidator.composite(ClassSecurityValidator.getGlobal(), trusted.build()));
    }

    public AvroSerde(SchemaRegistryClient registry) {
        this(registry, true);
    }

    /** @param autoRegister register a record's schema on first use; otherwise it must exist already. */
    public AvroSerde(SchemaRegistryClient registry, boolean autoRegister) {
        this.registry = registry;
        this.autoRegister = autoRegister;
    }

    public static String valueSubject(String topic) {
        return topic + "-value";
    }

    public byte[] serialize(String topic, GenericRecord record) {
        Schema schema = record.getSchema();
        SpecificWriting specific = record instanceof SpecificRecord
                ? specificWriters.computeIfAbsent(schema, AvroSerde::specificWriting)
                : null;
        Schema registered = specific != null ? specific.registered() : schema;
        String subject = subjects.computeIfAbsent(topic, AvroSerde::valueSubject);
        int id = autoRegister ? registry.register(subject, registered) : registry.lookup(subject, registered);
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        for (int i = 0; i < WireFormat.HEADER_SIZE; i++) {
            out.write(0); // room for the header, written once the id is final
        }
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        try {
            (specific != null ? specific.writer() : writers.computeIfAbsent(schema, GenericDatumWriter::new))
                    .write(record, enc);
            enc.flush();
        } catch (IOException | AvroRuntimeException | ClassCastException | NullPointerException e) {
            throw new SerdeException(
                    "record does not match its schema " + schema.getFullName() + ": " + e.getMessage(), e);
        }
        byte[] bytes = out.toByteArray();
        WireFormat.writeHeader(bytes, id);
        return bytes;
    }

    /** Decodes with the writer's own schema. */
    public GenericRecord deserialize(byte[] data) {
        int id = WireFormat.schemaId(data);
        GenericDatumReader<GenericRecord> reader = ownReaders.get(id);
        if (reader == null) {
            Schema writer = registry.schemaById(id);
            reader = ownReaders.computeIfAbsent(id, i -> new GenericDatumReader<>(writer, writer));
        }
        return (GenericRecord) decode(data, id, reader);
    }

    /** Decodes and resolves the writer's schema to reader (Avro schema resolution rules). */
    public GenericRecord deserialize(byte[] data, Schema reader) {
        int id = WireFormat.schemaId(data);
        Schema writer = registry.schemaById(id);
        return decode(data, id, writer, reader);
    }

    /**
     * Decodes into a generated record class, resolving the writer's schema to the class's
     * (Avro schema resolution rules), so fields are read by the compiler's names and types.
     */
    @SuppressWarnings("unchecked")
    public <T extends SpecificRecord> T deserialize(byte[] data, Class<T> type) {
        int id = WireFormat.schemaId(data);
        SpecificReading r = specificReaders.computeIfAbsent(type, this::specificReading);
        DatumReader<?> datumReader = readers.get(((long) id << 32) | r.readerKey());
        if (datumReader == null) {
            Schema writer = registry.schemaById(id);
            datumReader = readers.computeIfAbsent(
                    ((long) id << 32) | r.readerKey(), k -> new SpecificDatumReader<T>(writer, r.schema(), r.model()));
        }
        return (T) decode(data, id, datumReader);
    }

    /**
     * A generated record's writer, with its class's conversions (a generic record's has none),
     * and the schema as published that it registers under.
     */
    @SuppressWarnings("unchecked")
    private static SpecificWriting specificWriting(Schema schema) {
        Schema published = TallySchemas.published(schema);
        return new SpecificWriting(
                (DatumWriter<GenericRecord>)
                        (DatumWriter<?>) new SpecificDatumWriter<>(schema, SpecificData.getForSchema(schema)),
                published != null ? published : schema);
    }

    private SpecificReading specificReading(Class<?> type) {
        SpecificData model = SpecificData.getForClass(type);
        Schema schema = model.getSchema(type);
        return new SpecificReading(
                model, schema, readerIds.computeIfAbsent(schema, s -> nextReaderId.getAndIncrement()));
    }

    private GenericRecord decode(byte[] data, int id, Schema writer, Schema reader) {
        int readerKey = readerIds.computeIfAbsent(reader, r -> nextReaderId.getAndIncrement());
        return (GenericRecord) decode(
                data,
                id,
                readers.computeIfAbsent(
                        ((long) id << 32) | readerKey, k -> new GenericDatumReader<GenericRecord>(writer, reader)));
    }

    private Object decode(byte[] data, int id, DatumReader<?> datumReader) {
        BinaryDecoder dec = DecoderFactory.get()
                .binaryDecoder(data, WireFormat.HEADER_SIZE, data.length - WireFormat.HEADER_SIZE, null);
        try {
            Object record = datumReader.read(null, dec);
            if (!dec.isEnd()) {
                throw new SerdeException(
                        "corrupt Avro payload for schema id " + id + ": " + "bytes left over after the record");
            }
            return record;
        } catch (IOException | AvroRuntimeException | ArrayIndexOutOfBoundsException | NegativeArraySizeException e) {
            throw new SerdeException("corrupt Avro payload for schema id " + id + ": " + e.getMessage(), e);
        }
    }
}
