package record

// Wire constants, for the external tests that build hostile encodings.
const (
	FormatV1     = formatV1
	FBadTile     = fBadTile
	FChallenge   = fChallenge
	FCommitNanos = fCommitNanos
	FCommitment  = fCommitment
	FDataBytes   = fDataBytes
	FDataIndex   = fDataIndex
	FEpoch       = fEpoch
	FFLOPs       = fFLOPs
	FIndices     = fIndices
	FLeaves      = fLeaves
	FMiner       = fMiner
	FProofs      = fProofs
	FReason      = fReason
	FSecret      = fSecret
	FTileIndex   = fTileIndex
	FTileOK      = fTileOK
	FTileReason  = fTileReason
	FTiles       = fTiles
	FValidator   = fValidator
	FVerdict     = fVerdict
)
