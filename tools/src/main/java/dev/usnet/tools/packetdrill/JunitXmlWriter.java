package dev.usnet.tools.packetdrill;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * Writes script results as a JUnit XML report (the surefire shape CI systems read): one {@code <testcase>} per
 * script, a {@code <failure>} with the reason for a script that failed, an {@code <error>} for one that could
 * not be read, {@code <skipped>} for one not run.
 */
final class JunitXmlWriter {
    private JunitXmlWriter() {
    }

    /**
     * Writes {@code results} as test suite {@code suite}; each testcase's classname is {@code suite.targetName}
     * (a name CI tools can group by), the target's full description is a suite property.
     */
    static void write(Path file, String suite, String targetName, String targetDescription,
                      List<ScriptResult> results) throws IOException {
        int failures = 0;
        int errors = 0;
        int skipped = 0;
        double time = 0;
        for (ScriptResult r : results) {
            switch (r.outcome()) {
                case FAILED -> failures++;
                case BROKEN -> errors++;
                case SKIPPED -> skipped++;
                default -> {
                }
            }
            time += r.wallSeconds();
        }
        try (OutputStream out = Files.newOutputStream(file)) {
            XMLStreamWriter w = XMLOutputFactory.newInstance().createXMLStreamWriter(out, "UTF-8");
            w.writeStartDocument("UTF-8", "1.0");
            w.writeCharacters("\n");
            w.writeStartElement("testsuite");
            w.writeAttribute("name", suite);
            w.writeAttribute("tests", Integer.toString(results.size()));
            w.writeAttribute("failures", Integer.toString(failures));
            w.writeAttribute("errors", Integer.toString(errors));
            w.writeAttribute("skipped", Integer.toString(skipped));
            w.writeAttribute("time", seconds(time));
            w.writeCharacters("\n  ");
            w.writeStartElement("properties");
            w.writeEmptyElement("property");
            w.writeAttribute("name", "target");
            w.writeAttribute("value", targetDescription == null ? targetName : targetDescription);
            w.writeEndElement();
            w.writeCharacters("\n");
            for (ScriptResult r : results) {
                w.writeCharacters("  ");
                w.writeStartElement("testcase");
                w.writeAttribute("name", r.name());
                w.writeAttribute("classname", suite + "." + targetName);
                w.writeAttribute("time", seconds(r.wallSeconds()));
                switch (r.outcome()) {
                    case FAILED -> element(w, "failure", r);
                    case BROKEN -> element(w, "error", r);
                    case SKIPPED -> {
                        w.writeEmptyElement("skipped");
                        w.writeAttribute("message", r.message() == null ? "" : r.message());
                    }
                    default -> {
                    }
                }
                w.writeEndElement();
                w.writeCharacters("\n");
            }
            w.writeEndElement();
            w.writeCharacters("\n");
            w.writeEndDocument();
            w.close();
        } catch (XMLStreamException e) {
            throw new IOException("writing " + file + ": " + e.getMessage(), e);
        }
    }

    private static void element(XMLStreamWriter w, String name, ScriptResult r) throws XMLStreamException {
        w.writeStartElement(name);
        w.writeAttribute("message", r.message());
        w.writeCharacters(r.message() + (r.details() == null || r.details().isEmpty() ? "" : "\n" + r.details()));
        w.writeEndElement();
    }

    private static String seconds(double s) {
        return String.format(Locale.ROOT, "%.3f", s);
    }
}
