package dev.usnet.tools.experiment;

import dev.usnet.tcp.TcpTrace;
import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * PNG plots of congestion traces with JFreeChart: cwnd and ssthresh (left axis, packets) and snd_cwnd_cnt
 * (right axis) over time, one chart per preset, and one chart overlaying the presets' cwnd.
 */
final class TracePlot {
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
        new Color(0x9467bd), new Color(0xff7f0e)};

    static {
        // Render without a display (CI, servers).
        System.setProperty("java.awt.headless", "true");
    }

    private TracePlot() {}

    /** One preset: cwnd, ssthresh and snd_cwnd_cnt against time in milliseconds. */
    static void writeOne(Path png, String title, TcpTrace t, long startNanos) throws IOException {
        XYSeries cwnd = new XYSeries("snd_cwnd");
        XYSeries ssthresh = new XYSeries("snd_ssthresh");
        XYSeries cnt = new XYSeries("snd_cwnd_cnt");
        for (int r = 0; r < t.rows(); r++) {
            double ms = (t.timeNanos(r) - startNanos) / 1e6;
            cwnd.add(ms, t.cwnd(r), false);
            if (t.ssthresh(r) < 0x7fff_ffffL) {
                ssthresh.add(ms, t.ssthresh(r), false);
            }
            cnt.add(ms, t.sndCwndCnt(r), false);
        }
        XYSeriesCollection left = new XYSeriesCollection();
        left.addSeries(cwnd);
        left.addSeries(ssthresh);
        XYPlot plot = new XYPlot(left, new NumberAxis("time (ms, virtual)"), new NumberAxis("packets"),
                renderer(COLORS[0], COLORS[1]));
        plot.setDataset(1, new XYSeriesCollection(cnt));
        plot.setRangeAxis(1, new NumberAxis("snd_cwnd_cnt"));
        plot.mapDatasetToRangeAxis(1, 1);
        plot.setRenderer(1, renderer(COLORS[2]));
        style(plot);
        ChartUtils.saveChartAsPNG(png.toFile(), new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true), 1400, 700);
    }

    /** Several presets' cwnd on one chart. */
    static void writeOverlay(Path png, String title, List<String> names, List<TcpTrace> traces, List<Long> starts)
            throws IOException {
        XYSeriesCollection all = new XYSeriesCollection();
        Color[] colors = new Color[names.size()];
        for (int i = 0; i < names.size(); i++) {
            XYSeries s = new XYSeries("cwnd " + names.get(i));
            TcpTrace t = traces.get(i);
            for (int r = 0; r < t.rows(); r++) {
                s.add((t.timeNanos(r) - starts.get(i)) / 1e6, t.cwnd(r), false);
            }
            all.addSeries(s);
            colors[i] = COLORS[i % COLORS.length];
        }
        XYPlot plot = new XYPlot(all, new NumberAxis("time (ms, virtual)"), new NumberAxis("snd_cwnd (packets)"),
                renderer(colors));
        style(plot);
        ChartUtils.saveChartAsPNG(png.toFile(), new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true), 1400, 700);
    }

    private static XYStepRenderer renderer(Color... colors) {
        XYStepRenderer r = new XYStepRenderer();
        for (int i = 0; i < colors.length; i++) {
            r.setSeriesPaint(i, colors[i]);
            r.setSeriesStroke(i, new BasicStroke(1.2f));
        }
        return r;
    }

    private static void style(XYPlot plot) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlinePaint(new Color(0xdddddd));
    }
}
