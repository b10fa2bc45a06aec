package clirtoolkit;

import java.io.IOException;
import java.util.Arrays;
import java.util.Set;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Scorable;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SimpleCollector;
import org.apache.lucene.search.TopDocs;

/**
 * The hits of a Lucene search as two arrays, external document ids and scores, which pyjnius
 * converts in one call each (reading hit objects one by one costs about 5 microseconds a hit).
 *
 * <p>Anserini's {@code ScoredDocs.fromTopDocs} does the same, but opens a new stored-fields
 * reader for every hit and reads the whole stored document for its id: each hit decompresses
 * its block of stored fields again. This class reads a search's new ids through one reader,
 * and only the id field, and keeps each document's id once read (an array indexed by Lucene's
 * document number): the documents that many queries retrieve are read once. The ids of an
 * index never change while it is open, so a race between two searching threads can only
 * write the same id twice.
 */
public final class HitReader {
  /** The stored field that holds a document's external id (Anserini's {@code Constants.ID}). */
  public static final String ID_FIELD = "id";

  private static final Set<String> ID_ONLY = Set.of(ID_FIELD);

  private final IndexSearcher searcher;
  private final String[] idOf;

  public HitReader(IndexSearcher searcher) {
    this.searcher = searcher;
    this.idOf = new String[searcher.getIndexReader().maxDoc()];
  }

  /** The hits of {@code top}, in its order. */
  public Hits read(TopDocs top) throws IOException {
    ScoreDoc[] found = top.scoreDocs;
    Hits hits = new Hits(found.length);
    StoredFields fields = null;
    for (int i = 0; i < found.length; i++) {
      int doc = found[i].doc;
      String id = idOf[doc];
      if (id == null) {
        if (fields == null) {
          fields = searcher.storedFields();
        }
        id = fields.document(doc, ID_ONLY).get(ID_FIELD);
        idOf[doc] = id;
      }
      hits.docids[i] = id;
      hits.scores[i] = found[i].score;
    }
    return hits;
  }

  /**
   * Every document of {@code query} that scores {@code minScore} or more, in no order; null
   * when more than {@code limit} do (the search stops there).
   *
   * <p>Where a top-k search ties at its cut-off, these are the candidates for the tied places:
   * the caller orders them by score and then id, and cuts. The scorer is told the minimum, so
   * it skips what cannot reach it (block-max WAND), as a top-k search does once its queue is
   * full: about half the cost of searching again sorted by score and id, which scores and
   * compares every matching document. A tie of very many documents (a one-word query in a
   * large collection) would have every id read: past {@code limit}, the caller searches
   * sorted instead, which keeps k documents at a time.
   */
  public Hits atLeast(Query query, float minScore, int limit) throws IOException {
    AtLeast collector = new AtLeast(minScore, limit);
    try {
      searcher.search(query, collector);
    } catch (TooMany stop) {
      return null;
    }
    ScoreDoc[] found = new ScoreDoc[collector.count];
    for (int i = 0; i < collector.count; i++) {
      found[i] = new ScoreDoc(collector.docs[i], collector.scores[i]);
    }
    return read(new TopDocs(null, found));
  }

  /** Ends a search that found more documents than {@link #atLeast} may return. */
  private static final class TooMany extends RuntimeException {
    TooMany() {
      super(null, null, false, false); // no stack trace: it is no error
    }
  }

  /** Collects the documents that score at least a minimum, up to a limit. */
  private static final class AtLeast extends SimpleCollector {
    private final float minScore;
    private final int limit;
    private Scorable scorer;
    private int docBase;
    int count;
    int[] docs = new int[1024];
    float[] scores = new float[1024];

    AtLeast(float minScore, int limit) {
      this.minScore = minScore;
      this.limit = limit;
    }

    @Override
    public ScoreMode scoreMode() {
      return ScoreMode.TOP_SCORES;
    }

    @Override
    public void setScorer(Scorable scorer) throws IOException {
      this.scorer = scorer;
      scorer.setMinCompetitiveScore(minScore);
    }

    @Override
    protected void doSetNextReader(LeafReaderContext context) {
      docBase = context.docBase;
    }

    @Override
    public void collect(int doc) throws IOException {
      float score = scorer.score();
      if (score < minScore) {
        return;
      }
      if (count == limit) {
        throw new TooMany();
      }
      if (count == docs.length) {
        docs = Arrays.copyOf(docs, 2 * count);
        scores = Arrays.copyOf(scores, 2 * count);
      }
      docs[count] = docBase + doc;
      scores[count] = score;
      count++;
    }
  }

  /** External ids and scores of a search's hits, best first. */
  public static final class Hits {
    public final String[] docids;
    public final float[] scores;

    Hits(int size) {
      docids = new String[size];
      scores = new float[size];
    }
  }
}
