package dev.usnet.tools.compare;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** PNG charts of a comparison with JFreeChart: one series per variant, so variants read side by side. */
public final class ComparePlots {
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0x9467bd), new Color(0xff7f0e), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
        new Color(0xbcbd22), new Color(0x17becf)};
    private static final int WIDTH = 1200;
    private static final int HEIGHT = 700;

    static {
        // Render without a display (CI, servers).
        System.setProperty("java.awt.headless", "true");
    }

    private ComparePlots() {}

    /** One variant's values for a chart: its name in the legend, and what it shows. */
    record Named<T>(String name, T value) {}

    /** A congestion window trace: time (ms, from the trace's start) and snd_cwnd (packets) at each row. */
    record CwndSeries(String name, double[] timeMs, long[] cwnd) {
        CwndSeries {
            if (timeMs.length != cwnd.length) {
                throw new IllegalArgumentException("cwnd series " + name + ": " + timeMs.length + " times but "
                        + cwnd.length + " values");
            }
        }
    }

    /**
     * Latency percentile curves, one per variant, as HdrHistogram's plotter draws a percentile distribution:
     * x is the percentile on a log scale of 1/(1-p) (so 90%, 99%, 99.9% are equally far apart), y the latency
     * in microseconds. Histograms hold nanoseconds; an empty one is left out. Returns whether any curve was drawn.
     */
    static boolean writePercentiles(Path png, String title, List<Named<Histogram>> variants) throws IOException {
        XYSeriesCollection all = new XYSeriesCollection();
        int drawn = 0;
        double maxX = 10;
        Color[] colors = new Color[variants.size()];
        List<Named<Histogram>> nonEmpty = new java.util.ArrayList<>();
        for (Named<Histogram> v : variants) {
            Histogram h = v.value();
            if (h == null || h.getTotalCount() == 0) {
                continue;
            }
            XYSeries s = new XYSeries(v.name(), false, true);
            for (HistogramIterationValue it : h.percentiles(5)) {
                double p = it.getPercentileLevelIteratedTo();
                if (p >= 100.0) {
                    break; // 1/(1-p) is infinite: HdrHistogram's plotter leaves the 100% point out too
                }
                double x = 1.0 / (1.0 - p / 100.0);
                s.add(x, h.highestEquivalentValue(it.getValueIteratedTo()) / 1000.0);
                maxX = Math.max(maxX, x);
            }
            all.addSeries(s);
            nonEmpty.add(v);
            colors[drawn++] = COLORS[variants.indexOf(v) % COLORS.length];
        }
        if (drawn == 0) {
            return false;
        }
        LogAxis x = new LogAxis("percentile");
        x.setBase(10);
        x.setTickUnit(new NumberTickUnit(1));
        x.setNumberFormatOverride(new PercentileFormat());
        x.setRange(1, Math.pow(10, Math.ceil(Math.log10(maxX))));
        NumberAxis y = new NumberAxis("latency (µs)");
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < drawn; i++) {
            r.setSeriesPaint(i, colors[i]);
            r.setSeriesStroke(i, stroke(variants.indexOf(nonEmpty.get(i))));
        }
        XYPlot plot = new XYPlot(all, x, y, r);
        style(plot);
        ChartUtils.saveChartAsPNG(png.toFile(), new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true), WIDTH, HEIGHT);
        return true;
    }

    /**
     * Grouped bars: per category (an app, a namespace), one bar per variant. {@code values[v][c]} is variant v's
     * value for category c; NaN leaves the bar out.
     */
    public static void writeBars(Path png, String title, String valueLabel, List<String> categories, List<String> variants,
                          double[][] values) throws IOException {
        DefaultCategoryDataset d = new DefaultCategoryDataset();
        for (int v = 0; v < variants.size(); v++) {
            for (int c = 0; c < categories.size(); c++) {
                if (!Double.isNaN(values[v][c])) {
                    d.addValue(values[v][c], variants.get(v), categories.get(c));
                }
            }
        }
        JFreeChart chart = ChartFactory.createBarChart(title, null, valueLabel, d, PlotOrientation.VERTICAL, true, false,
                false);
        CategoryPlot plot = chart.getCategoryPlot();
        BarRenderer r = (BarRenderer) plot.getRenderer();
        r.setBarPainter(new StandardBarPainter());
        r.setShadowVisible(false);
        for (int v = 0; v < variants.size(); v++) {
            r.setSeriesPaint(v, COLORS[v % COLORS.length]);
        }
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }

    /** Congestion windows of one TCP app, one step line per variant, against time in milliseconds. */
    static void writeCwndOverlay(Path png, String title, List<CwndSeries> variants) throws IOException {
        XYSeriesCollection all = new XYSeriesCollection();
        XYStepRenderer r = new XYStepRenderer();
        for (int i = 0; i < variants.size(); i++) {
            CwndSeries c = variants.get(i);
            XYSeries s = new XYSeries(c.name(), false, true);
            for (int k = 0; k < c.timeMs().length; k++) {
                s.add(c.timeMs()[k], c.cwnd()[k], false);
            }
            all.addSeries(s);
            r.setSeriesPaint(i, COLORS[i % COLORS.length]);
            r.setSeriesStroke(i, stroke(i));
        }
        XYPlot plot = new XYPlot(all, new NumberAxis("time (ms, virtual)"), new NumberAxis("snd_cwnd (packets)"), r);
        style(plot);
        ChartUtils.saveChartAsPNG(png.toFile(), new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true), WIDTH, HEIGHT);
    }

    /** Variant i's line: solid for the baseline, then dashes of other lengths, so identical curves stay visible. */
    private static BasicStroke stroke(int i) {
        if (i == 0) {
            return new BasicStroke(1.6f);
        }
        float dash = 2f + 4f * ((i - 1) % 4);
        return new BasicStroke(1.6f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 10f, new float[] {dash, 4f}, 0f);
    }

    private static void style(XYPlot plot) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlinePaint(new Color(0xdddddd));
    }

    /** Labels a 1/(1-p) tick with its percentile p: 1 is 0%, 10 is 90%, 1000 is 99.9%. */
    static final class PercentileFormat extends NumberFormat {
        @Override
        public StringBuffer format(double v, StringBuffer to, FieldPosition pos) {
            // As many decimals as the tick has nines past 99: 10^k is 100 - 10^(2-k) percent.
            int decimals = Math.max(0, (int) Math.round(Math.log10(v)) - 2);
            return to.append(String.format(java.util.Locale.ROOT, "%." + decimals + "f%%", 100.0 * (1.0 - 1.0 / v)));
        }

        @Override
        public StringBuffer format(long v, StringBuffer to, FieldPosition pos) {
            return format((double) v, to, pos);
        }

        @Override
        public Number parse(String source, ParsePosition pos) {
            throw new UnsupportedOperationException("a percentile axis label is never parsed");
        }
    }
}
