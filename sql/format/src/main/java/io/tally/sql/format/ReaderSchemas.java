package io.tally.sql.format;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.flink.formats.avro.typeutils.AvroSchemaConverter;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.types.logical.RowType;

/**
 * The schema a table reads with: Avro resolves each record's writer schema to it. Taken from the
 * subject's newest version, cut down to the table's columns in the table's order (flink-avro's
 * converters read fields by position), so a column keeps its Avro type (an enum stays an enum,
 * a field added later has its default for older records). Without a subject it is derived from
 * the column types, as flink-avro's own formats do.
 */
final class ReaderSchemas {
    private ReaderSchemas() {}

    static Schema forColumns(Schema subjectSchema, RowType columns, String subject) {
        if (subjectSchema == null) {
            return AvroSchemaConverter.convertToSchema(columns);
        }
        if (subjectSchema.getType() != Schema.Type.RECORD) {
            throw new ValidationException("subject '" + subject + "' holds a " + subjectSchema.getType()
                    + " schema; tally-avro reads records");
        }
        List<Schema.Field> fields = new ArrayList<>();
        for (String column : columns.getFieldNames()) {
            Schema.Field f = subjectSchema.getField(column);
            if (f == null) {
                throw new ValidationException("column '" + column + "' is not a field of subject '" + subject
                        + "' (its fields: " + names(subjectSchema) + ")");
            }
            fields.add(new Schema.Field(f, f.schema()));
        }
        return Schema.createRecord(
                subjectSchema.getName(), subjectSchema.getDoc(), subjectSchema.getNamespace(), false, fields);
    }

    /** A write encodes every field of the subject's schema, by position: the columns must be those fields, in order. */
    static void checkWritable(Schema subjectSchema, RowType columns, String subject) {
        List<String> expected = names(subjectSchema);
        if (!expected.equals(columns.getFieldNames())) {
            throw new ValidationException("tally-avro writes a row with subject '" + subject
                    + "''s newest schema, so the table's physical columns must be its fields in order: "
                    + expected + "; the table has " + columns.getFieldNames());
        }
    }

    private static List<String> names(Schema record) {
        return record.getFields().stream().map(Schema.Field::name).toList();
    }
}
