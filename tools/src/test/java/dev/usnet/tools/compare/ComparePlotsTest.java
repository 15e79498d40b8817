package dev.usnet.tools.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The charts on their own: each variant's series is drawn in its own colour, on a percentile axis for latencies. */
class ComparePlotsTest {
    private static final int BLUE = 0x1f77b4;
    private static final int RED = 0xd62728;
    private static final int GREEN = 0x2ca02c;

    private static int pixels(BufferedImage img, int rgb) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if ((img.getRGB(x, y) & 0xffffff) == rgb) {
                    n++;
                }
            }
        }
        return n;
    }

    @Test
    void cwndTracesOfTwoVariantsAreOverlaidEachInItsColour(@TempDir Path tmp) throws IOException {
        Path png = tmp.resolve("cwnd.png");
        double[] t = {0, 1, 2, 3, 4, 5, 6, 7};
        ComparePlots.writeCwndOverlay(png, "cwnd a.burst-0", List.of(
                new ComparePlots.CwndSeries("#1 usnet.tcp.kernel=3.18", t, new long[] {10, 20, 40, 80, 40, 41, 42, 43}),
                new ComparePlots.CwndSeries("#2 usnet.tcp.kernel=3.19", t, new long[] {5, 10, 20, 30, 60, 90, 120, 150})));
        CompareTest.assertPng(png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertTrue(pixels(img, BLUE) > 300, "baseline line drawn: " + pixels(img, BLUE));
        assertTrue(pixels(img, RED) > 150, "second variant drawn: " + pixels(img, RED));
        assertEquals(0, pixels(img, GREEN), "no third series");
        assertThrows(IllegalArgumentException.class,
                () -> new ComparePlots.CwndSeries("x", new double[] {0, 1}, new long[] {1}));
    }

    @Test
    void percentileCurvesSkipEmptyHistogramsAndLabelTheAxisInPercentiles(@TempDir Path tmp) throws IOException {
        Histogram fast = new Histogram(3);
        Histogram slow = new Histogram(3);
        for (int i = 1; i <= 10_000; i++) {
            fast.recordValue(10_000L + i);           // 10..20 µs
            slow.recordValue(i % 100 == 0 ? 5_000_000L : 40_000L); // 40 µs, 1% at 5 ms
        }
        Path png = tmp.resolve("lat.png");
        assertTrue(ComparePlots.writePercentiles(png, "latency", List.of(new ComparePlots.Named<>("#1 fast", fast),
                new ComparePlots.Named<>("#2 empty", new Histogram(3)), new ComparePlots.Named<>("#3 slow", slow))));
        CompareTest.assertPng(png);
        BufferedImage img = ImageIO.read(png.toFile());
        assertTrue(pixels(img, BLUE) > 300, "#1 drawn");
        assertEquals(0, pixels(img, RED), "#2 is empty: no line, and #3 keeps its own colour");
        assertTrue(pixels(img, GREEN) > 300, "#3 drawn");
        assertFalse(ComparePlots.writePercentiles(tmp.resolve("none.png"), "none",
                List.of(new ComparePlots.Named<>("#1", new Histogram(3)), new ComparePlots.Named<Histogram>("#2", null))));
        assertFalse(tmp.resolve("none.png").toFile().exists());

        ComparePlots.PercentileFormat f = new ComparePlots.PercentileFormat();
        assertEquals("0%", f.format(1.0));
        assertEquals("90%", f.format(10.0));
        assertEquals("99%", f.format(100.0));
        assertEquals("99.9%", f.format(1000.0));
        assertEquals("99.999%", f.format(100_000.0));
    }

    @Test
    void barsPerCategoryAndVariant(@TempDir Path tmp) throws IOException {
        Path png = tmp.resolve("bars.png");
        ComparePlots.writeBars(png, "throughput", "Mbit/s", List.of("a.stream-0", "a.rr-0"), List.of("#1", "#2"),
                new double[][] {{100, 1}, {200, Double.NaN}});
        CompareTest.assertPng(png);
        BufferedImage img = ImageIO.read(png.toFile());
        // #2's bar at 200 is twice #1's at 100: about twice the pixels.
        double ratio = (double) pixels(img, RED) / pixels(img, BLUE);
        assertTrue(ratio > 1.6 && ratio < 2.4, "ratio " + ratio);
    }
}
